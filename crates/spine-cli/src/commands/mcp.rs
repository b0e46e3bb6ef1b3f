//! `spine mcp list [--connect]`: every configured MCP server with its source (file and key),
//! whether it is approved (your settings, trusted project, enabled by your settings, or skipped
//! because the project is untrusted), and with `--connect` the tools of the approved ones.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::context;
use crate::cli::{McpCommand, McpListArgs, OutputFormat};
use crate::error::{config, exit};

/// Runs `spine mcp`.
pub async fn mcp(cmd: McpCommand) -> anyhow::Result<u8> {
    match cmd {
        McpCommand::List(args) => list(&args).await,
    }
}

async fn list(args: &McpListArgs) -> anyhow::Result<u8> {
    let home = context::spine_home()?;
    let project = context::project_dir(args.common.cwd.as_ref())?;
    let settings = context::settings(&home, &project, &args.common.settings, args.common.trust)?;
    let servers = spine_agent::configured_mcp_servers(&settings, &project).map_err(|e| config(e.to_string()))?;
    let mut tools: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut failures: BTreeMap<String, String> = BTreeMap::new();
    if args.connect {
        let child_env = spine_agent::child_env(&settings);
        let connection =
            spine_agent::connect_mcp(&settings, &project, &child_env).await.map_err(|e| config(e.to_string()))?;
        for tool in connection.tools.mcp_tools() {
            tools.entry(tool.server().to_owned()).or_default().push(tool.remote_name().to_owned());
        }
        connection.tools.shutdown().await;
        for issue in connection.issues {
            failures.entry(issue.server.clone()).or_insert_with(|| issue.to_string());
        }
    }
    let status = |s: &spine_agent::ConfiguredMcpServer| -> String {
        if s.approval.starts() && !s.effective {
            "replaced by a later entry".to_owned()
        } else {
            s.approval.to_string()
        }
    };
    if args.common.output_format != OutputFormat::Text {
        let rows: Vec<Value> = servers
            .iter()
            .map(|s| {
                let mut row = json!({
                    "name": s.name,
                    "source": s.source,
                    "approved": s.effective,
                    "status": status(s),
                });
                if args.connect
                    && s.effective
                    && let Some(obj) = row.as_object_mut()
                {
                    obj.insert("tools".into(), json!(tools.get(&s.name).cloned().unwrap_or_default()));
                    if let Some(f) = failures.get(&s.name) {
                        obj.insert("error".into(), json!(f));
                    }
                }
                row
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&json!({"servers": rows})).unwrap_or_default());
        return Ok(exit::OK);
    }
    if servers.is_empty() {
        println!("no MCP servers configured");
        return Ok(exit::OK);
    }
    for s in &servers {
        println!("{}  {}  [{}]", s.name, s.source, status(s));
        if args.connect && s.effective {
            match (failures.get(&s.name), tools.get(&s.name)) {
                (Some(f), _) => println!("    failed: {f}"),
                (None, Some(list)) => println!("    tools: {}", list.join(", ")),
                (None, None) => println!("    tools: (none)"),
            }
        }
    }
    if settings.trust.is_trusted() {
        return Ok(exit::OK);
    }
    if servers.iter().any(|s| !s.approval.starts()) {
        println!("run `spine trust {}` to approve the project's servers", project.display());
    }
    Ok(exit::OK)
}
