//! Text limits of the tools' output.
//!
//! Capped process output (head and tail around a `[output truncated: N characters omitted]`
//! marker) comes from [`spine_process::capture`]; this module adds [`truncate_line`], which cuts
//! one over-long line (Read, Grep).

pub(crate) use spine_process::capture::{is_truncated, render_pair};

/// Cuts a line to `max` characters, marking the cut. Returns the line and whether it was cut.
pub(crate) fn truncate_line(line: &str, max: usize) -> (String, bool) {
    let end = line.char_indices().nth(max).map_or(line.len(), |(i, _)| i);
    if end == line.len() { (line.to_owned(), false) } else { (format!("{}… [line truncated]", &line[..end]), true) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_cut_on_character_boundaries() {
        assert_eq!(truncate_line("ééé", 2), ("éé… [line truncated]".into(), true));
        assert_eq!(truncate_line("ab", 2), ("ab".into(), false));
    }
}
