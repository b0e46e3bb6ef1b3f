//! Pipeline costs: the token estimate of one message appended to a 10,000-message
//! transcript (with the per-message cache; target ≤ 100 µs), a full BPE count of 1 MB of text,
//! and `prepare_turn` on a workspace with 20 skills; loading the memory files of a project with
//! a realistic `CLAUDE.md` family (a user file, two directories, imports), against none.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use spine_core::memory_files::{self, MemorySources};
use spine_core::skills::{SkillCatalog, SkillRoot, SkillRootKind};
use spine_core::stages::prepare_turn::{TurnInputs, TurnSettings, prepare_turn};
use spine_core::tokens::{BpeEstimator, Encoding, TokenCache, TokenEstimator};
use spine_core::trace::Trace;
use spine_core::workspace::Workspace;
use spine_protocol::message::Message;

fn sample_text(bytes: usize) -> String {
    let para = "The quick brown fox jumps over the lazy dog; fn main() { println!(\"{}\", 42); } \
                let spine = Runtime::new(hooks, tools).await?; // comments, code and prose 你好 🌍\n";
    para.repeat(bytes / para.len() + 1)[..bytes].to_owned()
}

fn transcript(n: usize) -> Vec<Message> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                Message::user(format!("message {i} asks about the build"))
            } else {
                Message::assistant_text(format!("answer {i}: it passed"))
            }
        })
        .collect()
}

fn estimate_append(c: &mut Criterion) {
    let estimator = BpeEstimator::new(Encoding::O200kBase);
    let base = transcript(10_000);
    let mut cache = TokenCache::new();
    cache.estimate(&estimator, &base);
    let mut with_new = base.clone();
    with_new.push(Message::user("one more question about the failing test in crates/spine-core"));
    c.bench_function("estimate_one_new_message_on_10000", |b| {
        b.iter_batched(
            || cache.clone(),
            |mut cache| cache.estimate(&estimator, &with_new),
            criterion::BatchSize::SmallInput,
        );
    });
}

fn bpe_throughput(c: &mut Criterion) {
    let text = sample_text(1 << 20);
    let mut group = c.benchmark_group("bpe_count_1mb");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(10);
    for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let e = BpeEstimator::new(enc);
        e.count_text("warm up");
        group.bench_function(e.name(), |b| b.iter(|| e.count_text(&text)));
    }
    group.finish();
}

fn prepare_with_skills(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("dir");
    let root = dir.path().join(".spine/skills");
    for i in 0..20 {
        let d = root.join(format!("skill-{i}"));
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(
            d.join("SKILL.md"),
            format!("---\nname: skill-{i}\ndescription: does thing {i}\n---\nSteps for skill {i}.\n"),
        )
        .expect("w");
    }
    std::fs::write(dir.path().join("SOUL.md"), "Be precise.").expect("w");
    let ws = Workspace::new(dir.path()).expect("ws");
    let (catalog, _) = SkillCatalog::scan(&[SkillRoot { path: root, kind: SkillRootKind::Live }]);
    let estimator: Arc<dyn TokenEstimator> = Arc::new(BpeEstimator::new(Encoding::O200kBase));
    let settings = TurnSettings::default();
    let mut messages = transcript(40);
    messages.push(Message::user("use $skill-3 and $skill-7 please"));
    let trace = Trace::default();
    c.bench_function("prepare_turn_20_skills", |b| {
        b.iter(|| {
            let inputs = TurnInputs {
                settings: &settings,
                workspace: &ws,
                skills: &catalog,
                operator_state: None,
                memory: None,
                estimator: estimator.as_ref(),
                tools: &[],
            };
            let mut cache = TokenCache::new();
            prepare_turn(&inputs, &messages, Some(&mut cache), &trace)
        });
    });
    c.bench_function("skill_catalog_scan_20", |b| {
        b.iter(|| {
            SkillCatalog::scan(&[SkillRoot { path: dir.path().join(".spine/skills"), kind: SkillRootKind::Live }])
        });
    });
}

fn load_memory_files(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tmp");
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    let sub = project.join("crates/app");
    let write = |path: std::path::PathBuf, text: &str| {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("w");
    };
    let body = "- Run `cargo test` before you commit; keep changes minimal.\n".repeat(40);
    write(home.join(".claude/CLAUDE.md"), &format!("{body}@~/prefs.md\n"));
    write(home.join("prefs.md"), &body);
    std::fs::create_dir_all(project.join(".git")).expect("git");
    write(project.join("CLAUDE.md"), &format!("{body}See @docs/style.md and @docs/testing.md\n"));
    write(project.join("docs/style.md"), &format!("{body}@rules/naming.md\n"));
    write(project.join("docs/rules/naming.md"), &body);
    write(project.join("docs/testing.md"), &body);
    write(project.join("CLAUDE.local.md"), &body);
    write(project.join("AGENTS.md"), &body);
    write(sub.join("CLAUDE.md"), &body);
    let ws = Workspace::new(&project).expect("ws");
    let cwd = sub.canonicalize().expect("canon");
    let sources = MemorySources::Load { home: Some(home) };
    let (files, warnings) = memory_files::load(&sources, &ws, &cwd);
    assert_eq!((files.files.len(), warnings.len()), (9, 0), "{warnings:?}");
    c.bench_function("memory_files_load_9_files", |b| b.iter(|| memory_files::load(&sources, &ws, &cwd)));
    let empty = tempfile::tempdir().expect("tmp");
    let empty_ws = Workspace::new(empty.path()).expect("ws");
    let none = MemorySources::Load { home: Some(empty.path().join("home")) };
    c.bench_function("memory_files_load_none", |b| b.iter(|| memory_files::load(&none, &empty_ws, empty_ws.root())));
}

criterion_group!(benches, estimate_append, bpe_throughput, prepare_with_skills, load_memory_files);
criterion_main!(benches);
