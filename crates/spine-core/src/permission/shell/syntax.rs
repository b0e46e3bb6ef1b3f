//! The walk over the tree-sitter-bash syntax tree: finds every simple command (at any depth:
//! lists, pipelines, substitutions, compound statements, function bodies, error-recovery
//! nodes) and every output redirection, and hands each command's words to
//! [`wrappers::simple`]. Unknown node kinds are descended into, so a construct the walk does
//! not name can hide nothing from it. The nodes where bash evaluates data as code go to
//! [`evaluated`].
//!
//! A line continuation (`\⏎`) between two tokens the grammar split is removed by bash before
//! it reads words (`r\⏎m` is `rm`): between a command's words they are joined here
//! ([`join_continued`]); anywhere else the command is opaque ([`continuations`]).

use tree_sitter::Node;

use super::files::{self, Access, Reach};
use super::words::{Word, WordKind, word};
use super::wrappers::{self, Stdin};
use super::{OpaqueReason, ShellAnalysis, SimpleCommand, builtins, evaluated};

/// Files that are not writes.
const NOT_FILES: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr"];

/// Walks `node` and everything below it.
pub(super) fn walk(node: Node<'_>, src: &str, depth: usize, out: &mut ShellAnalysis) {
    match node.kind() {
        "command" => command(node, src, depth, Stdin::Inherited, out),
        "redirected_statement" => redirected(node, src, depth, out),
        "declaration_command" | "unset_command" => builtin_declaration(node, src, depth, out),
        "file_redirect" => {
            file_redirect(node, src, out);
            children(node, src, depth, out);
        }
        "arithmetic_expansion" => evaluated::arithmetic(node, src, depth, out),
        "compound_statement" if evaluated::is_arithmetic_command(node) => evaluated::arithmetic(node, src, depth, out),
        "c_style_for_statement" => evaluated::c_style_for(node, src, depth, out),
        kind => {
            match kind {
                "variable_assignment" => evaluated::assignment(node, src, out),
                "expansion" => evaluated::expansion(node, src, out),
                "subscript" => evaluated::subscript(node, src, out),
                "for_statement" => evaluated::loop_variable(node, src, out),
                "binary_expression" => evaluated::test_binary(node, src, out),
                "unary_expression" => evaluated::test_unary(node, src, out),
                // In a here-document the grammar reads `$((x))` as `$( (x) )`; bash reads
                // arithmetic first. Both are looked at.
                "command_substitution" if src.get(node.byte_range()).is_some_and(|t| t.starts_with("$((")) => {
                    super::data::arithmetic(src.get(node.byte_range()).unwrap_or_default(), out);
                }
                _ => {}
            }
            children(node, src, depth, out);
        }
    }
}

fn children(node: Node<'_>, src: &str, depth: usize, out: &mut ShellAnalysis) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        walk(child, src, depth, out);
    }
}

/// A statement with redirections: a here-document or here-string feeds the body's stdin.
fn redirected(node: Node<'_>, src: &str, depth: usize, out: &mut ShellAnalysis) {
    let mut cursor = node.walk();
    let fed = node
        .children_by_field_name("redirect", &mut cursor)
        .any(|r| matches!(r.kind(), "heredoc_redirect" | "herestring_redirect"));
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match (child.kind(), fed) {
            ("command", true) => command(child, src, depth, Stdin::Script, out),
            _ => walk(child, src, depth, out),
        }
    }
}

/// A simple command: prefix assignments are dropped (their values are still walked for
/// substitutions), the name and arguments resolved, redirections recorded.
fn command(node: Node<'_>, src: &str, depth: usize, stdin: Stdin, out: &mut ShellAnalysis) {
    let mut words: Vec<Word> = Vec::new();
    let mut stdin = stdin;
    let mut cursor = node.walk();
    let mut previous: Option<Node<'_>> = None;
    for child in node.named_children(&mut cursor) {
        let joined =
            previous.is_some_and(|p| is_word(p.kind()) && is_continuation(src.get(p.end_byte()..child.start_byte())));
        previous = Some(child);
        if joined
            && is_word(child.kind())
            && let Some(last) = words.last_mut()
        {
            join_continued(last, word(child, src));
            if words.len() == 1 && words.first().is_some_and(|name| is_reserved_or_assignment(&name.value)) {
                // `P\⏎S4=…` is an assignment to bash, `i\⏎f` a keyword: not a command name.
                out.opaque.push(OpaqueReason::LineContinuation);
            }
            walk(child, src, depth, out);
            continue;
        }
        match child.kind() {
            "variable_assignment" | "subshell" | "comment" => walk(child, src, depth, out),
            "herestring_redirect" | "heredoc_redirect" => {
                stdin = Stdin::Script;
                walk(child, src, depth, out);
            }
            "file_redirect" => walk(child, src, depth, out),
            "command_name" => {
                let name = child.named_child(0).map_or_else(|| Word::literal(""), |n| word(n, src));
                words.push(name);
                walk(child, src, depth, out);
            }
            _ => {
                words.push(word(child, src));
                walk(child, src, depth, out);
            }
        }
    }
    wrappers::simple(&words, depth, stdin, out);
}

/// `export`, `declare`, `local`, `readonly`, `typeset`, `unset`: recorded as commands (the
/// keyword and its words); names are checked ([`builtins::declaration`]: an assignment node's
/// subscript here is a name argument), values walked.
fn builtin_declaration(node: Node<'_>, src: &str, depth: usize, out: &mut ShellAnalysis) {
    let keyword = node.child(0).map_or("", |k| k.kind()).to_owned();
    let mut argv = vec![keyword.clone()];
    let mut words = Vec::new();
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let w = word(child, src);
        argv.push(w.value.clone());
        match child.kind() {
            // The value is the assignment's (the walk below); the name is checked as an argument.
            "variable_assignment" => {
                let name = child.child_by_field_name("name").map_or_else(|| Word::literal(""), |n| word(n, src));
                words.push(name);
            }
            _ => words.push(w),
        }
    }
    builtins::declaration(&keyword, &words, out);
    out.commands.push(SimpleCommand { argv });
    children(node, src, depth, out);
}

/// Whether a command's child is one of its words (the name or an argument), not an
/// assignment, a redirection or a comment.
fn is_word(kind: &str) -> bool {
    !matches!(
        kind,
        "variable_assignment" | "subshell" | "comment" | "herestring_redirect" | "heredoc_redirect" | "file_redirect"
    )
}

/// Whether the text between two tokens is only line continuations (`\⏎`, one or more).
fn is_continuation(gap: Option<&str>) -> bool {
    gap.is_some_and(|g| !g.is_empty() && g.split("\\\n").all(str::is_empty))
}

/// Whether a command name joined at a line continuation is something else to bash: an
/// assignment (`NAME=…`, `NAME[…]=…`) or a reserved word.
fn is_reserved_or_assignment(name: &str) -> bool {
    let reserved = [
        "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do", "done", "in",
        "function", "time", "coproc", "{", "}", "!", "[[", "]]",
    ];
    let head = name.split(['=', '[']).next().unwrap_or_default();
    reserved.contains(&name)
        || (name.contains('=') && !head.is_empty() && head.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// Appends a word the grammar split at a line continuation to the word before it.
fn join_continued(last: &mut Word, next: Word) {
    last.value.push_str(&next.value);
    last.raw.push_str(&next.raw);
    last.kind = match (last.kind, next.kind) {
        (WordKind::Dynamic, _) | (_, WordKind::Dynamic) => WordKind::Dynamic,
        (WordKind::Pattern, _) | (_, WordKind::Pattern) => WordKind::Pattern,
        (WordKind::Literal, WordKind::Literal) => WordKind::Literal,
    };
}

/// Marks the analysis opaque when a line continuation joins two tokens that are not both
/// plain words of one command (those [`command`] joins itself).
pub(super) fn continuations(root: Node<'_>, src: &str, out: &mut ShellAnalysis) {
    let mut leaves = Vec::new();
    collect_leaves(root, &mut leaves);
    for pair in leaves.windows(2) {
        let [left, right] = pair else { continue };
        if !is_continuation(src.get(left.end_byte()..right.start_byte())) {
            continue;
        }
        let word_char = |c: Option<char>| c.is_some_and(|c| !c.is_whitespace() && !";&|()<>".contains(c));
        let before = src.get(..left.end_byte()).and_then(|s| s.chars().next_back());
        let after = src.get(right.start_byte()..).and_then(|s| s.chars().next());
        if !word_char(before) || !word_char(after) {
            continue;
        }
        let (Some(a), Some(b)) = (command_word(*left), command_word(*right)) else {
            out.opaque.push(OpaqueReason::LineContinuation);
            return;
        };
        if a.parent().map(|p| p.id()) != b.parent().map(|p| p.id()) {
            out.opaque.push(OpaqueReason::LineContinuation);
            return;
        }
    }
}

fn collect_leaves<'t>(node: Node<'t>, leaves: &mut Vec<Node<'t>>) {
    if node.child_count() == 0 {
        leaves.push(node);
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        collect_leaves(child, leaves);
    }
}

/// The word of a command (its name or an argument) that holds `leaf`, if any.
fn command_word(leaf: Node<'_>) -> Option<Node<'_>> {
    let mut node = leaf;
    loop {
        let parent = node.parent()?;
        if parent.kind() == "command" {
            return is_word(node.kind()).then_some(node);
        }
        node = parent;
    }
}

/// Records the file of a redirection: an output target is written, an input file read.
fn file_redirect(node: Node<'_>, src: &str, out: &mut ShellAnalysis) {
    let Some(destination) = node.child_by_field_name("destination") else {
        return;
    };
    let mut cursor = node.walk();
    let operator = node.children(&mut cursor).find(|c| !c.is_named()).map_or("", |c| c.kind());
    let (reads, writes) = match operator {
        "<" => (true, false),
        "<>" => (true, true),
        ">" | ">>" | "&>" | "&>>" | ">|" => (false, true),
        // `>&WORD` is `&>WORD` unless WORD is a descriptor or `-`.
        ">&" => (false, !matches!(destination.kind(), "number") && src.get(destination.byte_range()) != Some("-")),
        _ => (false, false),
    };
    if destination.kind() == "process_substitution" {
        return;
    }
    let target = word(destination, src);
    if reads && let Some(path) = files::operand_path(&target) {
        files::push(out, operator, path, Access::READ, Reach::Path, Access::NONE);
    }
    if writes {
        write_target(target, operator, out);
    }
}

/// Records a write target (redirection, `tee` or `find -fprint` operand) of `by`.
pub(super) fn write_target(target: Word, by: &str, out: &mut ShellAnalysis) {
    if NOT_FILES.contains(&target.value.as_str()) && target.is_literal() {
        return;
    }
    if let Some(path) = files::operand_path(&target) {
        files::push(out, by, path, Access::WRITE, Reach::Path, Access::NONE);
    }
    match target.kind {
        WordKind::Literal => out.writes.push(target.value),
        WordKind::Pattern | WordKind::Dynamic => {
            out.opaque.push(OpaqueReason::DynamicWriteTarget { text: target.value });
        }
    }
}
