//! Bash rule evaluation on a parse of the command: one `PermissionPolicy::decide` for a 1 KB
//! compound command (parse once, then every deny, ask and allow rule), the analysis alone, and
//! a tree-sitter parse with a parser created per call (what the thread-local parser saves).

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, json};
use spine_core::permission::shell::analyze;
use spine_core::permission::{CallFacts, PermissionPolicy, PermissionRule, PermissionRules};
use spine_protocol::permission::{PermissionMode, PermissionSuggestion};
use spine_protocol::tool::Effect;

/// A compound command of about 1 KB: lists, pipes, substitutions, wrappers, `sh -c`.
fn command_1k() -> String {
    let parts = [
        "git status --short",
        "echo \"building $(date +%s)\" | tee -a logs/build.log",
        "npm run test -- --reporter=dot",
        "ls -la src | grep -v '^total' | cat",
        "timeout 30 cargo build --release 2>&1",
        "if [ -f Cargo.lock ]; then echo locked; else echo unlocked; fi",
        "for f in src/*.rs; do wc -l \"$f\"; done",
        "bash -c 'echo nested; ls target'",
        "env RUST_LOG=debug cargo test -q -- --nocapture > logs/test.out",
    ];
    let mut command = String::new();
    let mut i = 0;
    while command.len() < 1024 {
        if !command.is_empty() {
            command.push_str(" && ");
        }
        command.push_str(parts[i % parts.len()]);
        i += 1;
    }
    command
}

fn policy() -> PermissionPolicy {
    let parse = |v: &[&str]| v.iter().map(|r| PermissionRule::parse(r).expect("rule")).collect();
    PermissionPolicy::new(
        PermissionRules {
            allow: parse(&[
                "Bash(git status:*)",
                "Bash(echo *)",
                "Bash(npm run test:*)",
                "Bash(ls *)",
                "Bash(grep *)",
                "Bash(cat *)",
                "Bash(tee *)",
                "Bash(timeout *)",
                "Bash(cargo *)",
                "Bash(wc *)",
                "Bash(bash *)",
                "Bash(env *)",
                "Bash([ *)",
                "Bash(date *)",
                "Edit(logs/**)",
            ]),
            ask: parse(&["Bash(git push *)", "Bash(npm publish *)"]),
            deny: parse(&["Bash(rm *)", "Bash(curl *)", "Bash(sudo *)", "Edit(.env)"]),
        },
        PermissionMode::Default,
        PathBuf::from("/proj"),
    )
}

fn bench(c: &mut Criterion) {
    let command = command_1k();
    let policy = policy();
    let mut args = Map::new();
    args.insert("command".into(), json!(command));
    let analysis = analyze(&command);
    assert!(!analysis.is_opaque(), "{:?}", analysis.opaque);
    let write_paths = analysis.write_paths(std::path::Path::new("/proj"));
    c.bench_function("bash_rules_decide_1k_compound", |b| {
        b.iter(|| {
            // The runner's path: parse once per decision, then decide.
            let analysis = analyze(black_box(&command));
            let facts = CallFacts {
                write_paths: &write_paths,
                shell: Some(&analysis),
                ..CallFacts::new("Bash", Effect::Execute, &args)
            };
            black_box(policy.decide(facts, &PermissionSuggestion::Passthrough, None))
        })
    });
    c.bench_function("bash_parse_1k_compound", |b| b.iter(|| black_box(analyze(black_box(&command)))));
    c.bench_function("tree_sitter_new_parser_and_parse_1k", |b| {
        b.iter(|| {
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(&tree_sitter_bash::LANGUAGE.into()).expect("grammar");
            black_box(parser.parse(black_box(&command), None))
        })
    });
    c.bench_function("tree_sitter_parse_1k_reused_parser", |b| {
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&tree_sitter_bash::LANGUAGE.into()).expect("grammar");
        b.iter(|| black_box(parser.parse(black_box(&command), None)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
