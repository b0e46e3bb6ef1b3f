//! The syntax nodes where bash evaluates data as code ([`super::data`] says why and what is
//! done about it): arithmetic expansions and commands, C-style `for` headers, parameter
//! expansions (`${x@P}` transforms, `${!x}` indirection, `${s:offset:length}`, `${x:=…}`),
//! subscripts, assignments, `for`/`select` variables and the operators of `[[ … ]]`.
//!
//! An arithmetic node is scanned as text; only the command and process substitutions inside it
//! are walked further (they still run, and are listed).

use tree_sitter::Node;

use super::data::{self, Assigned};
use super::words::word;
use super::{OpaqueReason, ShellAnalysis, syntax};

fn source<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or_default()
}

fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// `$((…))`, `$[…]`, `((…))` and any other arithmetic text.
pub(super) fn arithmetic(node: Node<'_>, src: &str, depth: usize, out: &mut ShellAnalysis) {
    data::arithmetic(source(node, src), out);
    substitutions(node, src, depth, out);
}

fn substitutions(node: Node<'_>, src: &str, depth: usize, out: &mut ShellAnalysis) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "command_substitution" | "process_substitution" => syntax::walk(child, src, depth, out),
            _ => substitutions(child, src, depth, out),
        }
    }
}

/// Whether a compound statement is an arithmetic command `((…))` (not a `{ …; }` group).
pub(super) fn is_arithmetic_command(node: Node<'_>) -> bool {
    node.child(0).is_some_and(|c| c.kind() == "((")
}

/// `for ((init; condition; update)) …`: the header is arithmetic, the body is walked.
pub(super) fn c_style_for(node: Node<'_>, src: &str, depth: usize, out: &mut ShellAnalysis) {
    let body = node.child_by_field_name("body").map(|b| b.id());
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        if Some(child.id()) == body || child.kind() == "comment" {
            syntax::walk(child, src, depth, out);
        } else {
            arithmetic(child, src, depth, out);
        }
    }
}

/// `${…}`: a transform (`${x@P}`) is opaque; `${!x}` evaluates `x`'s value as a name;
/// `${s:offset:length}` is arithmetic; `${x:=…}`/`${x=…}` assigns.
pub(super) fn expansion(node: Node<'_>, src: &str, out: &mut ShellAnalysis) {
    let kids = children(node);
    let at = |i: usize| kids.get(i).map_or("", |k| k.kind());
    let transform = kids.iter().enumerate().any(|(i, k)| !k.is_named() && k.kind() == "@" && at(i + 1) != "}");
    if transform {
        out.opaque.push(OpaqueReason::CodeInData { text: source(node, src).to_owned() });
    }
    let Some(target) = kids.iter().position(|k| matches!(k.kind(), "variable_name" | "subscript")) else {
        return;
    };
    let Some(target_node) = kids.get(target) else {
        return;
    };
    let name = variable_of(*target_node, src);
    if at(1) == "!" {
        let listing = match target_node.kind() {
            // `${!prefix@}`, `${!prefix*}`: the names that start with the prefix.
            "variable_name" => matches!(at(target + 1), "@" | "*"),
            // `${!a[@]}`: the keys.
            _ => matches!(index_text(*target_node, src).as_str(), "@" | "*"),
        };
        if !listing {
            data::evaluated(name, out);
        }
    }
    if kids.iter().any(|k| !k.is_named() && matches!(k.kind(), ":=" | "=")) {
        data::assigned(name, Assigned::Unknown, out);
    }
    if let (Some(colon), Some(last)) = (kids.iter().find(|k| !k.is_named() && k.kind() == ":"), kids.last()) {
        data::arithmetic(src.get(colon.end_byte()..last.start_byte()).unwrap_or_default(), out);
    }
}

/// The variable a `variable_name` or `subscript` node names.
fn variable_of<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    match node.kind() {
        "subscript" => node.child_by_field_name("name").map_or("", |n| source(n, src)),
        _ => source(node, src),
    }
}

/// The text between a subscript's brackets.
fn index_text(node: Node<'_>, src: &str) -> String {
    let kids = children(node);
    let open = kids.iter().find(|k| k.kind() == "[").map(Node::end_byte);
    let close = kids.iter().rev().find(|k| k.kind() == "]").map(Node::start_byte);
    match (open, close) {
        (Some(open), Some(close)) if open <= close => src.get(open..close).unwrap_or_default().to_owned(),
        _ => String::new(),
    }
}

/// `a[index]` outside an arithmetic text: the index is arithmetic (for an indexed array).
pub(super) fn subscript(node: Node<'_>, src: &str, out: &mut ShellAnalysis) {
    let index = index_text(node, src);
    if !matches!(index.as_str(), "@" | "*") {
        data::arithmetic(&index, out);
    }
}

/// `NAME=value`, `NAME+=value`, `NAME[i]=value`, `NAME=(…)`.
pub(super) fn assignment(node: Node<'_>, src: &str, out: &mut ShellAnalysis) {
    let Some(target) = node.child_by_field_name("name") else {
        return;
    };
    let name = variable_of(target, src);
    let Some(value) = node.child_by_field_name("value") else {
        data::assigned(name, Assigned::Literal(""), out);
        return;
    };
    match value.kind() {
        "array" => {
            let mut integers = true;
            let mut cursor = value.walk();
            for element in value.named_children(&mut cursor) {
                let element = word(element, src);
                let text = element.value.as_str();
                // `[key]=value`: the key is a subscript.
                let text = match text.strip_prefix('[').and_then(|t| t.split_once("]=")) {
                    Some((key, rest)) => {
                        data::arithmetic(key, out);
                        rest
                    }
                    None => text,
                };
                integers &= element.is_literal() && data::is_integer_literal(text);
            }
            let assigned = if integers { Assigned::Integer } else { Assigned::Unknown };
            data::assigned(name, assigned, out);
        }
        _ if is_arithmetic_result(value) => data::assigned(name, Assigned::Integer, out),
        _ => {
            let value = word(value, src);
            data::assigned(name, Assigned::of(&value), out);
        }
    }
}

/// `$((…))` or `"$((…))"`: an integer.
fn is_arithmetic_result(node: Node<'_>) -> bool {
    match node.kind() {
        "arithmetic_expansion" => true,
        "string" => {
            let mut cursor = node.walk();
            let named: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            matches!(named.as_slice(), [only] if only.kind() == "arithmetic_expansion")
        }
        _ => false,
    }
}

/// `for NAME in WORDS` / `select NAME in WORDS`: `NAME` holds data unless every word is an
/// integer literal (without `in`, it takes the positional parameters).
pub(super) fn loop_variable(node: Node<'_>, src: &str, out: &mut ShellAnalysis) {
    let Some(variable) = node.child_by_field_name("variable") else {
        return;
    };
    let mut cursor = node.walk();
    let values: Vec<Node<'_>> = node.children_by_field_name("value", &mut cursor).collect();
    let integers = !values.is_empty()
        && values.iter().all(|v| {
            let w = word(*v, src);
            w.is_literal() && data::is_integer_literal(&w.value)
        });
    let assigned = if integers { Assigned::Integer } else { Assigned::Unknown };
    data::assigned(source(variable, src), assigned, out);
}

/// `[[ a -eq b ]]` (and `-ne`, `-lt`, `-le`, `-gt`, `-ge`): both operands are arithmetic.
/// (`[ a -eq b ]` and `test` compare integers without evaluating them.)
pub(super) fn test_binary(node: Node<'_>, src: &str, out: &mut ShellAnalysis) {
    let arithmetic_operator = node.child_by_field_name("operator").is_some_and(|op| {
        op.kind() == "test_operator" && matches!(source(op, src), "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge")
    });
    if arithmetic_operator && in_double_brackets(node) {
        for side in ["left", "right"] {
            if let Some(operand) = node.child_by_field_name(side) {
                data::arithmetic(source(operand, src), out);
            }
        }
    }
}

/// Whether a test expression is inside `[[ … ]]` (not `[ … ]`).
fn in_double_brackets(node: Node<'_>) -> bool {
    let mut current = node.parent();
    while let Some(parent) = current {
        if parent.kind() == "test_command" {
            return parent.child(0).is_some_and(|c| c.kind() == "[[");
        }
        current = parent.parent();
    }
    false
}

/// `[[ -v NAME ]]`, `[[ -R NAME ]]`: the operand is a variable name.
pub(super) fn test_unary(node: Node<'_>, src: &str, out: &mut ShellAnalysis) {
    let names_variable = node
        .child_by_field_name("operator")
        .is_some_and(|op| op.kind() == "test_operator" && matches!(source(op, src), "-v" | "-R"));
    if !names_variable {
        return;
    }
    let mut cursor = node.walk();
    if let Some(operand) = node.named_children(&mut cursor).find(|c| c.kind() != "test_operator") {
        data::name_argument(&word(operand, src), out);
    }
}
