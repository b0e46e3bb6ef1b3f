//! `Skill {skill, args?}` (effect: read): loads one of the run's skills, as Claude Code's tool
//! of that name does (recorded from Claude Code 2.1.328 in
//! `crates/spine-cli/tests/fixtures/claude-code-2.1.328/skill-tool.json`).
//!
//! Contract:
//! - Name and input schema are Claude Code's (`skill` required, `args` optional, both strings,
//!   their descriptions verbatim), so hooks matching `Skill` and rules `Skill(name)` apply.
//!   The description is spine's own: where the listing is, what the result holds.
//! - `skill` is normalised before hooks see it: trimmed, a leading `/` dropped.
//! - The skill comes from the run's catalog ([`ToolContext::skills`]); the lookup and the
//!   refusals are `spine_core::skills::SkillSession::invoke`'s: an unknown skill is
//!   `not_found` (`Unknown skill: NAME`), a `disable-model-invocation` or inactive one
//!   `tool_not_allowed`, an unreadable one `runtime_error`. Outside a run (no catalog), every
//!   skill is unknown.
//! - The response is Claude Code's `tool_response` (`{"success": true, "commandName",
//!   "allowedTools"?, "model"?}`, as PostToolUse hooks see it) plus `baseDirectory` and
//!   `content`, the text the model reads. The projection is `Launching skill: NAME`, a blank
//!   line, then that text (`Base directory for this skill: DIR`, a blank line, the body with
//!   its arguments): Claude Code sends the body as a text block after the tool result; spine
//!   puts it in the result, which every provider carries.
//! - What the skill's front matter restricts, and its model, take effect in the runner once the
//!   call has succeeded (`spine_core::skills::ActiveSkills`).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::skills::{InvokeError, Invoker, SKILL_TOOL};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use crate::args;

/// The `Skill` tool.
pub struct SkillTool;

/// The arguments of `Skill` (Claude Code's).
#[derive(Debug, Deserialize, JsonSchema)]
struct SkillArgs {
    #[schemars(description = "The name of a skill from the available-skills list. Do not guess names.")]
    skill: String,
    #[schemars(description = "Optional arguments for the skill")]
    args: Option<String>,
}

/// The tool's description.
const DESCRIPTION: &str = "Load a skill: a packaged set of instructions the user, the project or a plugin set up \
for a kind of task (deploy steps, a review checklist, a repository's workflow). The skills you may load are listed \
in the system prompt under Active Skills, with one-line descriptions. When the task at hand is one a listed skill \
covers, call this tool first: the result is the skill's instructions and its directory (read the files it names \
from there); follow them in place of your default approach. Users may ask for one by name (`/<name>`); that is a \
request to load it.\n\n- `skill`: the exact name from the listing, without a leading slash; a plugin's skills are \
`plugin:skill`.\n- `args`: optional arguments, filled into the skill's `$ARGUMENTS` placeholders.\n\nOnly listed \
names (or names the user typed) are valid. While a loaded skill lists `allowed-tools`, only those tools may run \
until the user's next prompt.";

#[async_trait]
impl Tool for SkillTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: SKILL_TOOL.to_owned(),
            description: DESCRIPTION.to_owned(),
            input_schema: args::schema::<SkillArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn normalize(&self, args: &mut Map<String, Value>, _cwd: &std::path::Path) {
        if let Some(Value::String(name)) = args.get_mut("skill") {
            *name = name.trim().trim_start_matches('/').to_owned();
        }
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let SkillArgs { skill, args } = args::parse(args)?;
        let Some(session) = &ctx.skills else {
            return Err(ToolError::new(ErrorCode::NotFound, format!("Unknown skill: {skill}")));
        };
        let invocation = session.invoke(&skill, args.as_deref(), Invoker::Model).map_err(|e| {
            let code = match &e {
                InvokeError::Unknown(_) => ErrorCode::NotFound,
                InvokeError::UserOnly(_) | InvokeError::ModelOnly(_) | InvokeError::Inactive(_) => {
                    ErrorCode::ToolNotAllowed
                }
                InvokeError::Read(_) => ErrorCode::RuntimeError,
            };
            ToolError::new(code, e.to_string())
        })?;
        let entry = &invocation.entry;
        let mut response = json!({"success": true, "commandName": entry.name});
        if let Some(tools) = &entry.meta.allowed_tools {
            response["allowedTools"] = json!(tools);
        }
        if let Some(model) = entry.meta.model() {
            response["model"] = json!(model);
        }
        response["baseDirectory"] = json!(entry.root_path);
        response["content"] = json!(invocation.text);
        Ok(response)
    }

    fn project(&self, response: &Value) -> Projection {
        let name = response["commandName"].as_str().unwrap_or_default();
        let content = response["content"].as_str().unwrap_or_default();
        Projection::plain(format!("Launching skill: {name}\n\n{content}"))
            .with("skill", name)
            .with("base_directory", response["baseDirectory"].clone())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use spine_core::skills::{SkillCatalog, SkillRoot, SkillRootKind, SkillSession, SkillVars};
    use spine_core::workspace::Workspace;

    use super::*;

    fn context(dir: &std::path::Path) -> ToolContext {
        let root = dir.join("skills");
        for (name, md) in [
            ("notes", "---\ndescription: Notes.\nallowed-tools: Read\nmodel: haiku\n---\nNotes for $ARGUMENTS.\n"),
            ("deploy", "---\ndescription: Deploys.\ndisable-model-invocation: true\n---\nDEPLOY\n"),
        ] {
            std::fs::create_dir_all(root.join(name)).expect("mkdir");
            std::fs::write(root.join(name).join("SKILL.md"), md).expect("write");
        }
        let (catalog, _) = SkillCatalog::scan(&[SkillRoot { path: root, kind: SkillRootKind::Live }]);
        let workspace = Arc::new(Workspace::new(dir).expect("workspace"));
        let mut ctx = ToolContext::new(workspace, "t1", SKILL_TOOL, spine_core::tool::ChildEnv::default());
        ctx.skills = Some(Arc::new(SkillSession { catalog: Arc::new(catalog), vars: SkillVars::default() }));
        ctx
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn the_schema_is_claude_codes_and_the_name_loses_its_slash() {
        let schema = SkillTool.spec().input_schema;
        assert_eq!(schema["required"], json!(["skill"]));
        assert_eq!(schema["properties"]["args"]["type"], "string");
        assert_eq!(schema["additionalProperties"], json!(false));
        let mut a = args(json!({"skill": " /notes "}));
        SkillTool.normalize(&mut a, std::path::Path::new("/"));
        assert_eq!(a["skill"], "notes");
    }

    #[tokio::test]
    async fn a_call_returns_claude_codes_response_and_the_body_and_refuses_what_it_must() {
        let dir = tempfile::tempdir().expect("tmp");
        let ctx = context(dir.path());
        let response = SkillTool.execute(&args(json!({"skill": "notes", "args": "today"})), &ctx).await.expect("runs");
        assert_eq!(response["success"], true);
        assert_eq!(response["commandName"], "notes");
        assert_eq!((response["allowedTools"].clone(), response["model"].clone()), (json!(["Read"]), json!("haiku")));
        let text = SkillTool.project(&response).content;
        let base = dir.path().join("skills/notes");
        assert_eq!(
            text,
            format!(
                "Launching skill: notes\n\nBase directory for this skill: {}\n\nNotes for today.\n",
                base.display()
            )
        );
        let refused = SkillTool.execute(&args(json!({"skill": "deploy"})), &ctx).await.expect_err("user only");
        assert_eq!(refused.code, ErrorCode::ToolNotAllowed);
        let unknown = SkillTool.execute(&args(json!({"skill": "nope"})), &ctx).await.expect_err("unknown");
        assert_eq!((unknown.code, unknown.message.as_str()), (ErrorCode::NotFound, "Unknown skill: nope"));
    }
}
