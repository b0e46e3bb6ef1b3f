//! The environment of hook processes: the command and persistent hooks of a registry get the
//! `ChildEnv` of its `BuildOptions` — two registries of one process with different values each
//! see their own — and a variable spine sets for hooks explicitly (`CLAUDE_PROJECT_DIR`) wins.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};
use spine_core::CancellationToken;
use spine_core::hooks::{HookContext, HookRegistry, HookRegistryBuilder, SessionInfo};
use spine_core::tool::ChildEnv;
use spine_hooks::BuildOptions;
use spine_protocol::hook::{HookEventName, PreToolUse, PreToolUseAction, PreToolUseInput};
use spine_protocol::permission::PermissionMode;

use crate::support::{Project, hooks};

/// A persistent hook that blocks every event, naming the variables it was started with.
const ENV_HOOK: &str = r#"
import json, os, sys
for line in sys.stdin:
    ev = json.loads(line)
    reason = "mark=%s dir=%s" % (os.environ.get("SPINE_T_MARK", ""), os.environ.get("CLAUDE_PROJECT_DIR", ""))
    print(json.dumps({"spine_seq": ev["spine_seq"], "decision": "block", "reason": reason}), flush=True)
"#;

fn marked(mark: &str) -> ChildEnv {
    let vars = BTreeMap::from([
        ("SPINE_T_MARK".to_owned(), mark.to_owned()),
        ("CLAUDE_PROJECT_DIR".to_owned(), "/from/settings".to_owned()),
    ]);
    ChildEnv::new(vars, Vec::<String>::new())
}

fn registry(p: &Project, handler: &Value, env: ChildEnv) -> HookRegistry {
    let config = p.hook_config(&[hooks("PreToolUse", "", vec![handler.clone()])]);
    let mut builder = HookRegistryBuilder::new();
    spine_hooks::register(&config, &mut builder, &BuildOptions::new(env)).expect("build");
    builder.build()
}

fn context(p: &Project) -> HookContext {
    HookContext {
        session: Arc::new(SessionInfo {
            session_id: "s1".into(),
            transcript_path: p.transcript(),
            cwd: p.root.clone(),
            hook_dir: p.root.clone(),
            project_dir: p.root.clone(),
            permission_mode: PermissionMode::Default,
            effort: None,
            env_file: None,
        }),
        event: HookEventName::PreToolUse,
        prompt_id: None,
        cancel: CancellationToken::new(),
        agent: None,
    }
}

/// The block reason the registry's one hook answers with.
async fn reason(registry: &HookRegistry, ctx: &HookContext) -> String {
    let input = PreToolUseInput {
        tool_name: "Bash".into(),
        spine_tool_name: None,
        tool_input: json!({"command": "ls"}),
        tool_use_id: "t".into(),
    };
    let hook = &registry.groups::<PreToolUse>()[0].hooks[0].hook;
    match hook.call(ctx, &input).await.map(|o| o.action) {
        Ok(PreToolUseAction::Block { reason, .. }) => reason.trim().to_owned(),
        other => panic!("expected a block, got {other:?}"),
    }
}

#[tokio::test]
async fn command_and_persistent_hooks_see_the_child_env_of_their_own_registry() {
    let p = Project::new();
    let script = p.script("env_hook.py", ENV_HOOK);
    let command = json!({
        "type": "command",
        "command": "echo \"mark=$SPINE_T_MARK dir=$CLAUDE_PROJECT_DIR\" >&2; exit 2",
    });
    let persistent = json!({"type": "command", "command": format!("/usr/bin/python3 {script}"), "persistent": true});
    let ctx = context(&p);
    let dir = p.root.display().to_string();
    for handler in [command, persistent] {
        let one = registry(&p, &handler, marked("one"));
        let two = registry(&p, &handler, marked("two"));
        let none = registry(&p, &handler, ChildEnv::default());
        let (a, b, c) = tokio::join!(reason(&one, &ctx), reason(&two, &ctx), reason(&none, &ctx));
        assert_eq!(a, format!("mark=one dir={dir}"), "{handler}");
        assert_eq!(b, format!("mark=two dir={dir}"), "{handler}");
        assert_eq!(c, format!("mark= dir={dir}"), "{handler}");
    }
}
