//! The child environment through the runner: every tool call of an agent carries the
//! `ChildEnv` of its config in its context (what a process the tool starts gets), and the calls
//! of a subagent carry its parent's.

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_core::subagents::AGENT_TOOL;
use spine_core::tool::{ChildEnv, Projection, Tool, ToolContext};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::{Effect, ToolError, ToolSpec};

use crate::support::*;

/// Logs `CALL_ID:MARK+PASSED` from the context it is called with.
struct EnvTool {
    log: Log,
}

#[async_trait]
impl Tool for EnvTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec { name: "env".into(), description: "the child env".into(), input_schema: json!({"type": "object"}) }
    }
    fn effect(&self) -> Effect {
        Effect::Read
    }
    async fn execute(&self, _args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let mark = ctx.child_env.vars().get("SPINE_T_MARK").cloned().unwrap_or_default();
        let passed: Vec<&str> = ctx.child_env.passed_through().iter().map(String::as_str).collect();
        self.log.push(format!("{}:{mark}+{}", ctx.call_id, passed.join(",")));
        Ok(json!({}))
    }
    fn project(&self, _response: &Value) -> Projection {
        Projection::plain("ok")
    }
}

#[tokio::test]
async fn tool_calls_of_an_agent_and_of_its_subagents_carry_the_agents_child_env() {
    let child = Script::new(vec![calls(&[("child-call", "env", json!({}))]), text("child done")]);
    let mut h = with_subagents(vec![definition("helper", child)]);
    h.tools.register(EnvTool { log: h.log.clone() });
    let env = ChildEnv::new(BTreeMap::from([("SPINE_T_MARK".to_owned(), "parent".to_owned())]), ["OPENAI_API_KEY"]);
    let subagents = h.configure.take();
    h.configure = Some(Box::new(move |config| {
        if let Some(subagents) = subagents {
            subagents(config);
        }
        config.child_env = env;
    }));
    let agent_call = json!({"description": "d", "prompt": "p", "subagent_type": "helper"});
    let replies =
        vec![calls(&[("parent-call", "env", json!({}))]), calls(&[("t1", AGENT_TOOL, agent_call)]), text("done")];
    let (outcome, _script, log) = h.run("go", replies).await;
    assert_eq!(outcome.subtype, RunSubtype::Success, "{}", outcome.result);
    assert_eq!(log.take(), ["parent-call:parent+OPENAI_API_KEY", "child-call:parent+OPENAI_API_KEY"]);
}

#[tokio::test]
async fn an_agent_configured_without_settings_gives_its_tools_an_empty_child_env() {
    let mut h = Harness::new();
    h.tools.register(EnvTool { log: h.log.clone() });
    let (outcome, _script, log) = h.run("go", vec![calls(&[("c1", "env", json!({}))]), text("done")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success, "{}", outcome.result);
    assert_eq!(log.take(), ["c1:+"]);
}
