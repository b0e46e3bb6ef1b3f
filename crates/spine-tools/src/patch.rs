//! Claude Code's `structuredPatch` for Edit and Write: the line diff of a file's old and new
//! text as unified-diff hunks.
//!
//! Each hunk is `{oldStart, oldLines, newStart, newLines, lines}`: starts are 1-based (1 for a
//! side with no line, as Claude Code gives it), `lines` holds whole lines without their `\n`,
//! prefixed with `-` (removed), `+` (added) or a space (context), and no `@@` header. A line
//! that does not end with a newline is followed by `\ No newline at end of file`. Hunks carry
//! [`CONTEXT`] lines of context, as `diff -u` does; changes closer than twice that share a
//! hunk. Lines end at `\n` only (a `\r` before it stays in the line), as Read counts them.
//!
//! The diff is Myers' (the `similar` crate); past [`DIFF_TIME`] it settles for a coarser but
//! still correct diff. Identical texts give no hunk.

use std::time::{Duration, Instant};

use serde::Serialize;
use similar::{Algorithm, DiffOp, DiffTag};

/// Context lines around each change (Claude Code's, and `diff -u`'s, 3).
pub(crate) const CONTEXT: usize = 3;
/// How long the diff may look for the smallest change set (Claude Code allows 5 s).
pub(crate) const DIFF_TIME: Duration = Duration::from_secs(5);
/// The largest old text included as `originalFile` (10 MiB, Claude Code's limit for Write);
/// beyond it `originalFile` is null.
pub(crate) const MAX_ORIGINAL_BYTES: usize = 10 * 1024 * 1024;

/// The marker after a line that has no newline.
const NO_NEWLINE: &str = "\\ No newline at end of file";

/// One hunk of a structured patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Hunk {
    pub(crate) old_start: usize,
    pub(crate) old_lines: usize,
    pub(crate) new_start: usize,
    pub(crate) new_lines: usize,
    pub(crate) lines: Vec<String>,
}

/// The hunks turning `old` into `new`.
pub(crate) fn structured_patch(old: &str, new: &str) -> Vec<Hunk> {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let deadline = Instant::now().checked_add(DIFF_TIME);
    let ops = similar::capture_diff_slices_deadline(Algorithm::Myers, &old_lines, &new_lines, deadline);
    similar::group_diff_ops(ops, CONTEXT).iter().filter_map(|group| hunk(group, &old_lines, &new_lines)).collect()
}

/// The old text as `originalFile`: `None` when it is larger than [`MAX_ORIGINAL_BYTES`].
pub(crate) fn original_file(text: &str) -> Option<&str> {
    (text.len() <= MAX_ORIGINAL_BYTES).then_some(text)
}

/// One group of operations (context included) as a hunk.
fn hunk(group: &[DiffOp], old: &[&str], new: &[&str]) -> Option<Hunk> {
    let (first, last) = (group.first()?, group.last()?);
    let old_range = first.old_range().start..last.old_range().end;
    let new_range = first.new_range().start..last.new_range().end;
    let mut lines = Vec::with_capacity(old_range.len() + new_range.len());
    for op in group {
        let (tag, o, n) = op.as_tag_tuple();
        let (removed, added, kept): (&[&str], &[&str], &[&str]) = match tag {
            DiffTag::Equal => (&[], &[], old.get(o).unwrap_or_default()),
            DiffTag::Delete => (old.get(o).unwrap_or_default(), &[], &[]),
            DiffTag::Insert => (&[], new.get(n).unwrap_or_default(), &[]),
            DiffTag::Replace => (old.get(o).unwrap_or_default(), new.get(n).unwrap_or_default(), &[]),
        };
        for (sign, part) in [(' ', kept), ('-', removed), ('+', added)] {
            for line in part {
                push_line(&mut lines, sign, line);
            }
        }
    }
    Some(Hunk {
        old_start: old_range.start + 1,
        old_lines: old_range.len(),
        new_start: new_range.start + 1,
        new_lines: new_range.len(),
        lines,
    })
}

fn push_line(lines: &mut Vec<String>, sign: char, line: &str) {
    match line.strip_suffix('\n') {
        Some(body) => lines.push(format!("{sign}{body}")),
        None => {
            lines.push(format!("{sign}{line}"));
            lines.push(NO_NEWLINE.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn a_one_line_file_gives_one_hunk_without_context_as_in_the_claude_code_recording() {
        let hunks = structured_patch("alpha beta gamma\n", "alpha delta gamma\n");
        assert_eq!(
            hunks,
            vec![Hunk {
                old_start: 1,
                old_lines: 1,
                new_start: 1,
                new_lines: 1,
                lines: vec!["-alpha beta gamma".into(), "+alpha delta gamma".into()],
            }]
        );
    }

    #[test]
    fn a_change_in_the_middle_of_a_long_file_has_three_context_lines_each_side() {
        let old = numbered(20);
        let new = old.replace("line 10\n", "line ten\n");
        let hunks = structured_patch(&old, &new);
        assert_eq!(hunks.len(), 1);
        let h = &hunks[0];
        assert_eq!((h.old_start, h.old_lines, h.new_start, h.new_lines), (7, 7, 7, 7));
        assert_eq!(
            h.lines,
            ["line 7", "line 8", "line 9", "-line 10", "+line ten", "line 11", "line 12", "line 13"]
                .iter()
                .map(|l| if l.starts_with(['-', '+']) { (*l).to_owned() } else { format!(" {l}") })
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn added_lines_count_on_the_new_side_only() {
        let old = numbered(10);
        let new = old.replace("line 5\n", "line 5\nextra a\nextra b\n");
        let hunks = structured_patch(&old, &new);
        assert_eq!(hunks.len(), 1);
        let h = &hunks[0];
        assert_eq!((h.old_start, h.old_lines, h.new_start, h.new_lines), (3, 6, 3, 8));
        assert_eq!(h.lines[2], " line 5");
        assert_eq!(h.lines[3..5], ["+extra a".to_owned(), "+extra b".to_owned()]);
    }

    #[test]
    fn changes_far_apart_are_separate_hunks_and_close_ones_share_one() {
        let old = numbered(30);
        // Lines 5 and 25: 19 equal lines between them, more than twice the context.
        let new = old.replace("line 5\n", "five\n").replace("line 25\n", "twenty-five\n");
        let hunks = structured_patch(&old, &new);
        let spans: Vec<_> = hunks.iter().map(|h| (h.old_start, h.old_lines, h.new_start, h.new_lines)).collect();
        assert_eq!(spans, [(2, 7, 2, 7), (22, 7, 22, 7)]);
        // Lines 5 and 11: 5 equal lines between them, fewer than six: one hunk.
        let new = old.replace("line 5\n", "five\n").replace("line 11\n", "eleven\n");
        let hunks = structured_patch(&old, &new);
        let spans: Vec<_> = hunks.iter().map(|h| (h.old_start, h.old_lines, h.new_start, h.new_lines)).collect();
        assert_eq!(spans, [(2, 13, 2, 13)]);
    }

    #[test]
    fn a_last_line_without_newline_is_marked() {
        let hunks = structured_patch("a\nb", "a\nc");
        assert_eq!(hunks.len(), 1);
        assert_eq!(hunks[0].lines, [" a", "-b", NO_NEWLINE, "+c", NO_NEWLINE]);
    }

    #[test]
    fn identical_texts_give_no_hunk_and_an_empty_old_text_starts_at_one() {
        assert!(structured_patch("same\n", "same\n").is_empty());
        assert!(structured_patch("", "").is_empty());
        let hunks = structured_patch("", "new\n");
        assert_eq!(
            hunks,
            vec![Hunk { old_start: 1, old_lines: 0, new_start: 1, new_lines: 1, lines: vec!["+new".into()] }]
        );
    }

    #[test]
    fn an_original_over_the_limit_is_left_out() {
        assert_eq!(original_file("small"), Some("small"));
        assert_eq!(original_file(&"x".repeat(MAX_ORIGINAL_BYTES + 1)), None);
    }
}
