//! The examples of the user documentation, run against the built `spine` binary.
//!
//! Every ```` ```console ```` block of `README.md`, `docs/cli.md`, `docs/hooks.md` and
//! `docs/permissions.md` is a [trycmd] case: each `$ spine …` line runs (a `> ` line continues
//! the command), and what it prints, stdout and stderr together, must match the lines below
//! it, where `[..]` stands for any text on a line and a `...` line for any lines. `? N` after
//! the command is its exit status (default 0). Blocks that cannot run here (a model key, the
//! network, a terminal) are ```` ```sh ```` or ```` ```text ````, which trycmd skips; so are the
//! syntax blocks.
//!
//! Each file runs in a directory of its own holding a copy of the repository's `examples/`
//! (the examples name `examples/demo/…` as from the root of a checkout), with `HOME` and
//! `SPINE_HOME` in a fresh directory (settings, trust and sessions start empty) and no model
//! key in the environment: every example runs offline, on the scripted model. The files run
//! one after the other, each from its own directory.
//!
//! A failing example prints its command, the expected and the actual output: fix the document
//! (or the binary). `every_console_block_is_run` fails when a document this file does not run
//! gets a `console` block.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::path::{Path, PathBuf};

/// The documents whose `console` blocks are run, relative to the repository root.
const DOCUMENTS: &[&str] = &["README.md", "docs/cli.md", "docs/hooks.md", "docs/permissions.md"];

/// The variables that would choose a model or export telemetry, set empty for the examples
/// (spine reads an empty value as unset): every example names its model, and a key in the
/// environment would change what `spine doctor` prints.
const CLEARED: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
];

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/spine-cli sits two levels under the repository root")
        .to_path_buf()
}

/// Copies the directory `from` to `to`, recursively, with each file's permissions; a symbolic
/// link is copied as what it points to (`examples/items/` links into `crates/`).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy's directory");
    for entry in std::fs::read_dir(from).expect("read an examples directory") {
        let entry = entry.expect("read an examples entry");
        let target = to.join(entry.file_name());
        let path = entry.path();
        if path.is_dir() {
            copy_tree(&path, &target);
        } else if path.is_file() {
            std::fs::copy(&path, &target).expect("copy an example file");
        }
    }
}

#[test]
fn documented_examples_run() {
    let root = repository_root();
    let spine = env!("CARGO_BIN_EXE_spine");
    for document in DOCUMENTS {
        let case = root.join(document);
        assert!(case.is_file(), "{} is missing", case.display());
        let dir = tempfile::tempdir().expect("a directory for the examples");
        // Canonical, so that the paths spine prints are the ones trycmd redacts as [CWD].
        let work = dir.path().canonicalize().expect("canonical temporary directory");
        copy_tree(&root.join("examples"), &work.join("examples"));
        let home = work.join("home");
        std::fs::create_dir_all(&home).expect("the examples' HOME");
        // The commands run in the current directory: one file's at a time.
        std::env::set_current_dir(&work).expect("enter the examples' directory");

        let cases = trycmd::TestCases::new();
        cases
            .register_bin("spine", Path::new(spine))
            .env("HOME", home.display().to_string())
            .env("SPINE_HOME", home.join(".spine").display().to_string())
            .env("NO_COLOR", "1")
            .env("TERM", "dumb");
        for name in CLEARED {
            cases.env(*name, "");
        }
        cases.case(&case);
        cases.run();
    }
    std::env::set_current_dir(&root).expect("back to the repository");
}

/// A `console` block is a promise that the commands in it run: one in a document this file
/// does not run would go stale unseen.
#[test]
fn every_console_block_is_run() {
    let root = repository_root();
    let mut documents = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).expect("read docs/") {
        let path = entry.expect("a docs/ entry").path();
        if path.extension().is_some_and(|ext| ext == "md") {
            documents.push(path);
        }
    }
    for path in documents {
        let relative = path.strip_prefix(&root).expect("under the repository").to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).expect("read a document");
        let has_console =
            text.lines().any(|line| line.trim_start_matches('`').starts_with("console") && line.starts_with("```"));
        assert!(
            !has_console || DOCUMENTS.contains(&relative.as_str()),
            "{relative} has a ```console block that no test runs: add it to DOCUMENTS in \
             crates/spine-cli/tests/docs.rs (and give its other code blocks a language, `text` or `sh`), \
             or make the block ```sh"
        );
    }
}
