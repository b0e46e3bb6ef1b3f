//! The walk over the tree-sitter-bash syntax tree: finds every simple command (at any depth:
//! lists, pipelines, substitutions, compound statements, function bodies, error-recovery
//! nodes) and every output redirection, and hands each command's words to
//! [`wrappers::simple`]. Unknown node kinds are descended into, so a construct the walk does
//! not name can hide nothing from it.

use tree_sitter::Node;

use super::words::{Word, WordKind, word};
use super::wrappers::{self, Stdin};
use super::{OpaqueReason, ShellAnalysis, SimpleCommand};

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
        _ => children(node, src, depth, out),
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
    for child in node.named_children(&mut cursor) {
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
/// keyword and its words); values are walked for substitutions.
fn builtin_declaration(node: Node<'_>, src: &str, depth: usize, out: &mut ShellAnalysis) {
    let keyword = node.child(0).map_or("", |k| k.kind()).to_owned();
    let mut argv = vec![keyword];
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        argv.push(word(child, src).value);
    }
    out.commands.push(SimpleCommand { argv });
    children(node, src, depth, out);
}

/// Records the target of an output redirection.
fn file_redirect(node: Node<'_>, src: &str, out: &mut ShellAnalysis) {
    let Some(destination) = node.child_by_field_name("destination") else {
        return;
    };
    let mut cursor = node.walk();
    let operator = node.children(&mut cursor).find(|c| !c.is_named()).map_or("", |c| c.kind());
    let writes = match operator {
        ">" | ">>" | "&>" | "&>>" | ">|" | "<>" => true,
        // `>&WORD` is `&>WORD` unless WORD is a descriptor or `-`.
        ">&" => !matches!(destination.kind(), "number") && src.get(destination.byte_range()) != Some("-"),
        _ => false,
    };
    if !writes || destination.kind() == "process_substitution" {
        return;
    }
    write_target(word(destination, src), out);
}

/// Records a write target (redirection, `tee` or `find -fprint` operand).
pub(super) fn write_target(target: Word, out: &mut ShellAnalysis) {
    match target.kind {
        WordKind::Literal => {
            if !NOT_FILES.contains(&target.value.as_str()) {
                out.writes.push(target.value);
            }
        }
        WordKind::Pattern | WordKind::Dynamic => {
            out.opaque.push(OpaqueReason::DynamicWriteTarget { text: target.value });
        }
    }
}
