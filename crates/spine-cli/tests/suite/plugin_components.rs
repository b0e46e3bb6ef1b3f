//! What an enabled plugin brings besides hooks, through the binary: its commands in a chat
//! (`/plugin:command`, and `/command` when free), its agents as `plugin:agent` subagent types,
//! its MCP servers (`mcp__plugin_<plugin>_<server>__<tool>`), the one line about the plugins an
//! untrusted project enables, and a plugin hook's source in the trace and its OTLP span. Plugins
//! come from `--plugin-dir`, or are recorded by hand as installed in
//! `$SPINE_HOME/plugins/installed_plugins.json` and enabled in the user's settings.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::otel::{Receiver, attr, named};
use crate::support::*;

/// A plugin named `name` at `<sandbox>/plugins/<name>` with its manifest and `files` (path
/// relative to the plugin → text); returns its directory, canonical.
fn plugin(s: &Sandbox, name: &str, files: &[(&str, String)]) -> PathBuf {
    let root = s.dir.path().join("plugins").join(name);
    let manifest = json!({"name": name, "version": "1.0.0", "description": format!("the {name} plugin")});
    spine_testkit::files::write_file(&root, ".claude-plugin/plugin.json", &manifest.to_string());
    for (rel, text) in files {
        spine_testkit::files::write_file(&root, rel, text);
    }
    root.canonicalize().expect("plugin dir")
}

/// `hooks/hooks.json` with a PreToolUse hook on Bash that refuses the call, naming the
/// plugin's root (from its environment).
fn refusing_bash_hook() -> (&'static str, String) {
    let hook =
        json!({"type": "command", "command": "echo \"refused by the plugin in $CLAUDE_PLUGIN_ROOT\" >&2; exit 2"});
    ("hooks/hooks.json", json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}).to_string())
}

/// Records `id` as installed for the user at `root` in spine's store and enables it in the
/// user's settings (`$SPINE_HOME/settings.json`).
fn install_for_the_user(s: &Sandbox, id: &str, root: &Path) {
    let installed =
        json!({"version": 2, "plugins": {id: [{"scope": "user", "installPath": root, "version": "1.0.0"}]}});
    spine_testkit::files::write_file(&s.home(), "plugins/installed_plugins.json", &installed.to_string());
    spine_testkit::files::write_file(&s.home(), "settings.json", &json!({"enabledPlugins": {id: true}}).to_string());
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf8")
}

#[test]
fn a_plugin_command_runs_in_a_chat_as_plugin_colon_command_and_by_its_own_name_with_the_plugin_root_replaced() {
    let s = Sandbox::new();
    let greet = "---\ndescription: Greets from the plugin\nargument-hint: NAME\n---\n\
                 Greet $ARGUMENTS using ${CLAUDE_PLUGIN_ROOT}/greeting.txt\n";
    let root = plugin(&s, "tools", &[("commands/greet.md", greet.to_owned())]);
    let script = s.script(json!([{"text": "first answer"}, {"text": "second answer"}]));
    let tmux = chat_session(&s, &script, &[], &format!("--plugin-dir {}", shell_quote(path(&root))));
    tmux.send_line("/help");
    let help = tmux.wait_for("/tools:greet NAME");
    assert!(
        help.contains("Greets from the plugin (plugin tools@inline) [also /greet]"),
        "/help names the plugin and the free plain name: {help}"
    );
    tmux.send_line("/tools:greet Ada");
    tmux.wait_for("first answer");
    tmux.send_line("/greet Bob");
    tmux.wait_for("second answer");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");

    let transcript = s.session_files().into_iter().find(|p| p.extension().is_some_and(|e| e == "jsonl"));
    let transcript = std::fs::read_to_string(transcript.expect("a transcript")).expect("read");
    for name in ["Ada", "Bob"] {
        let expanded = format!("Greet {name} using {}/greeting.txt", root.display());
        assert!(transcript.contains(&expanded), "`{expanded}` in the transcript: {transcript}");
    }
}

/// A plugin `tools` with the agent `helper` whose model is the script of `turns` in the
/// plugin (`scripted:${CLAUDE_PLUGIN_ROOT}/child.json`); `front` is added to its front matter.
fn plugin_with_agent(s: &Sandbox, front: &str, turns: Value) -> PathBuf {
    let agent = format!(
        "---\nname: helper\ndescription: the plugin's helper\nmodel: scripted:${{CLAUDE_PLUGIN_ROOT}}/child.json\n\
         {front}---\nYou help, from ${{CLAUDE_PLUGIN_ROOT}}.\n"
    );
    let root = plugin(s, "tools", &[("agents/helper.md", agent)]);
    spine_testkit::script::write_script_file(&root.join("child.json"), turns).expect("child script");
    root
}

#[test]
fn a_plugin_agent_is_the_subagent_type_plugin_colon_agent_a_task_call_starts_without_its_hooks() {
    let s = Sandbox::new();
    let hooks = "hooks:\n  Stop: [{hooks: [{type: command, command: 'exit 2'}]}]\npermissionMode: bypassPermissions\n";
    let root = plugin_with_agent(&s, hooks, json!([{"text": "the plugin's helper answered"}]));
    let task = json!({"id": "t1", "name": "Task",
        "arguments": {"description": "a task", "prompt": "help", "subagent_type": "tools:helper"}});
    let script = s.script(json!([{"tool_calls": [task]}, {"text": "done"}]));
    let out = s.run(&script, &["--plugin-dir", path(&root), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["result"], "done");
    assert!(first_tool_result(&v).contains("the plugin's helper answered"), "{v}");
    let err = stderr(&out);
    let file = root.join("agents/helper.md");
    for key in ["hooks", "permissionMode"] {
        let warning = format!(
            "warning: agent definition {} (plugin tools@inline): `{key}` ignored: a plugin's agent may not set it",
            file.display()
        );
        assert!(err.contains(&warning), "`{warning}` in: {err}");
    }
}

#[test]
fn the_agent_tools_description_lists_a_plugins_agent_under_its_scoped_name() {
    const KEY: &str = "sk-test-secret-key-0123456789";
    let s = Sandbox::new();
    let root = plugin_with_agent(&s, "", json!([{"text": "helped"}]));
    let call = json!({"description": "a task", "prompt": "help", "subagent_type": "tools:helper"});
    let server = SseServer::start(vec![anthropic_tool_use("t1", "Agent", &call), anthropic_text("done")]);
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr))
        .env("ANTHROPIC_API_KEY", KEY)
        .args(["run", "-p", "delegate", "--model", "anthropic:claude-sonnet-4-5", "--plugin-dir", path(&root)])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "done\n");
    let bodies = server.bodies();
    let tools = bodies[0]["tools"].as_array().cloned().unwrap_or_default();
    let agent = tools.iter().find(|t| t["name"] == "Agent").expect("the Agent tool is offered");
    let description = agent["description"].as_str().unwrap_or_default();
    assert!(description.contains("\n- tools:helper: the plugin's helper"), "{description}");
    assert!(bodies[1].to_string().contains("helped"), "the subagent's answer goes back: {}", bodies[1]);
}

#[test]
fn a_plugins_mcp_server_connects_and_its_tool_is_mcp_plugin_plugin_server_tool() {
    let s = Sandbox::new();
    let everything = spine_testkit::mcp::peer_entry("server-everything");
    let servers = json!({"mcpServers": {"everything": {"command": "node", "args": [everything, "stdio"],
        "env": {"FROM_PLUGIN": "${CLAUDE_PLUGIN_ROOT}"}}}});
    let root = plugin(&s, "tools", &[(".mcp.json", servers.to_string())]);
    let tool = "mcp__plugin_tools_everything__echo";
    let script = s.script(json!([
        {"tool_calls": [{"id": "e1", "name": tool, "arguments": {"message": "hi from the plugin"}}]},
        {"text": "done"}
    ]));
    let out = s.run(
        &script,
        &["--plugin-dir", path(&root), "--output-format", "json", "--include-messages", "--allowedTools", tool],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(tool_results(&v), ["Echo: hi from the plugin"], "{v}");

    let listed = s.spine().args(["mcp", "list", "--connect", "--plugin-dir", path(&root)]).output().expect("runs");
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    let text = stdout(&listed);
    let line = format!(
        "plugin:tools:everything  {} (plugin tools@inline) mcpServers.everything  [approved (plugin tools@inline, \
         enabled by --plugin-dir)]",
        root.join(".mcp.json").display()
    );
    assert!(text.contains(&line), "`{line}` in: {text}");
    assert!(text.contains("    tools: ") && text.contains("echo"), "{text}");
    let listed = s.spine().args(["mcp", "list", "--output-format", "json", "--plugin-dir", path(&root)]).output();
    let rows = json(&listed.expect("runs"));
    assert_eq!(rows["servers"][0]["plugin"], "tools@inline", "{rows}");
}

#[test]
fn an_untrusted_projects_plugin_is_not_loaded_and_one_stderr_line_names_it_and_how_to_trust() {
    let s = Sandbox::new();
    let root = plugin(&s, "guard", &[refusing_bash_hook()]);
    let project = s.project().canonicalize().expect("project");
    // Installed for this project (a user install would load it in any project).
    let install = json!({"scope": "project", "projectPath": project, "installPath": root, "version": "1.0.0"});
    let installed = json!({"version": 2, "plugins": {"guard@market": [install]}});
    spine_testkit::files::write_file(&s.home(), "plugins/installed_plugins.json", &installed.to_string());
    s.write(".claude/settings.json", &json!({"enabledPlugins": {"guard@market": true}}).to_string());
    let settings = project.join(".claude/settings.json");
    let script = s.script(bash_then_answer("echo ran-unguarded"));
    let out = s.run(&script, &["--allowedTools", "Bash(echo:*)", "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = first_tool_result(&json(&out));
    assert!(result.ends_with("ran-unguarded"), "the plugin's hook did not run: {result}");
    let err = stderr(&out);
    let notice = format!(
        "spine: plugin guard@market (enabled by {}) not loaded: the project is not trusted — run `spine trust {}` to \
         trust it (or pass --trust for one run)",
        settings.display(),
        project.display()
    );
    assert_eq!(err.lines().filter(|l| l.contains("guard@market")).collect::<Vec<_>>(), [notice.as_str()], "{err}");

    let not_loaded =
        format!("plugin guard@market (enabled by {}) not loaded: their hooks do not run", settings.display());
    let withheld = format!("1 plugin withheld: project not trusted — run `spine trust {}`", project.display());
    let hooks = s.spine().args(["hooks", "list"]).output().expect("runs");
    assert!(stdout(&hooks).contains(&not_loaded), "spine hooks list: {}", stdout(&hooks));
    assert!(stdout(&hooks).contains(&withheld), "spine hooks list: {}", stdout(&hooks));
    assert!(!stdout(&hooks).contains("no hooks configured"), "spine hooks list: {}", stdout(&hooks));
    let not_started =
        format!("plugin guard@market (enabled by {}) not loaded: their MCP servers do not start", settings.display());
    let mcp = s.spine().args(["mcp", "list"]).output().expect("runs");
    assert!(stdout(&mcp).contains(&not_started), "spine mcp list: {}", stdout(&mcp));
    assert!(stdout(&mcp).contains(&withheld), "spine mcp list: {}", stdout(&mcp));
}

#[test]
fn a_plugin_installed_and_enabled_in_user_settings_runs_in_an_untrusted_project_and_its_trace_entry_names_it() {
    let s = Sandbox::new();
    let root = plugin(&s, "guard", &[refusing_bash_hook()]);
    install_for_the_user(&s, "guard@market", &root);
    let trace = s.dir.path().join("trace.jsonl");
    let script = s.script(bash_then_answer("echo should-not-run"));
    let out = s.run(
        &script,
        &["--allowedTools", "Bash", "--output-format", "json", "--include-messages", "--trace", path(&trace)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = first_tool_result(&json(&out));
    assert!(result.contains(&format!("refused by the plugin in {}", root.display())), "{result}");
    assert!(!stderr(&out).contains("not loaded"), "{}", stderr(&out));
    let entries = spine_testkit::files::read_jsonl(&trace);
    let hook = entries
        .iter()
        .find(|e| e["kind"] == "hook" && e["event"] == "PreToolUse")
        .unwrap_or_else(|| panic!("a PreToolUse hook entry: {entries:?}"));
    let source =
        format!("{} (plugin guard@market) hooks.PreToolUse[0].hooks[0]", root.join("hooks/hooks.json").display());
    assert_eq!(hook["source"], source.as_str(), "{hook}");
    assert_eq!(hook["decision"], "block", "{hook}");
}

#[test]
fn a_plugin_hooks_otlp_span_names_the_plugin_and_its_source_splits_into_file_and_json_path() {
    let s = Sandbox::new();
    let root = plugin(&s, "guard", &[refusing_bash_hook()]);
    let receiver = Receiver::start();
    let script = s.script(bash_then_answer("echo should-not-run"));
    let out = s
        .spine()
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .args(["--plugin-dir", path(&root), "--allowedTools", "Bash"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let spans = receiver.spans();
    let hooks = named(&spans, "hook PreToolUse");
    assert_eq!(hooks.len(), 1, "{:?}", spans.iter().map(|(s, _)| &s.name).collect::<Vec<_>>());
    let file = root.join("hooks/hooks.json").display().to_string();
    let hook = hooks[0];
    assert_eq!(attr(hook, "spine.hook.source"), format!("{file} (plugin guard@inline) hooks.PreToolUse[0].hooks[0]"));
    assert_eq!(attr(hook, "spine.hook.source.file"), file.as_str());
    assert_eq!(attr(hook, "spine.hook.source.path"), "hooks.PreToolUse[0].hooks[0]");
    assert_eq!(attr(hook, "spine.hook.source.plugin"), "guard@inline");
}

/// The text of the first user message of a `--include-messages` JSON result.
fn first_user_text(out: &std::process::Output) -> String {
    let v = json(out);
    let messages = v["messages"].as_array().cloned().unwrap_or_default();
    let user = messages.iter().find(|m| m["role"] == "user").cloned().unwrap_or_default();
    user["content"].as_str().map(str::to_owned).unwrap_or_else(|| user["content"].to_string())
}

#[test]
fn print_mode_runs_a_custom_command_given_as_the_prompt_with_its_allowed_tools() {
    let s = Sandbox::new();
    let greet = "---\nallowed-tools: Bash(/bin/echo greeted:*)\n---\nGreet $ARGUMENTS from ${CLAUDE_PLUGIN_ROOT}\n";
    let root = plugin(&s, "tools", &[("commands/greet.md", greet.to_owned())]);
    s.write(".claude/commands/review.md", "Review $1 carefully\n");
    s.trust();
    let run = |prompt: &str, script: &Path| {
        s.spine()
            .args(["run", "-p", prompt, "--model", &format!("scripted:{}", script.display())])
            .args(["--plugin-dir", path(&root), "--output-format", "json", "--include-messages"])
            .output()
            .expect("runs")
    };
    // The plugin's command: expanded, and its allowed-tools allow the Bash call for this prompt
    // (print mode asks nobody: without the rule the call would be refused).
    let out = run("/tools:greet Ada", &s.script(bash_then_answer("/bin/echo greeted Ada")));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(first_user_text(&out), format!("Greet Ada from {}", root.display()));
    assert!(first_tool_result(&json(&out)).contains("greeted Ada"), "the command's rule allowed it: {}", stdout(&out));
    // The same call from a plain prompt is refused: the rule was the command's, for its prompt.
    let plain = run("greet Ada", &s.script(bash_then_answer("/bin/echo greeted Ada")));
    assert!(first_tool_result(&json(&plain)).contains("permission_denied"), "{}", stdout(&plain));
    // A project command by its name; an unknown name stays the prompt.
    let review = run("/review app.py", &s.script(json!([{"text": "ok"}])));
    assert_eq!(first_user_text(&review), "Review app.py carefully");
    let unknown = run("/no-such-command now", &s.script(json!([{"text": "ok"}])));
    assert_eq!(first_user_text(&unknown), "/no-such-command now");
}
