//! `spine mcp list [--connect]`: every configured MCP server with its source (file and key),
//! whether it is approved (your settings, trusted project, enabled by your settings, or skipped
//! because the project is untrusted), and with `--connect` the tools of the approved ones.
//!
//! An enabled plugin's server (`--plugin-dir`, `enabledPlugins`) is listed as
//! `plugin:<plugin>:<server>` with its plugin's file and id, approved by whoever enabled the
//! plugin; the plugins an untrusted project enables and spine did not load are named after the
//! list. In an untrusted project the list ends with the sentence that counts what it withholds
//! and how to trust it (`crate::withheld`).

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
    let common = &args.common;
    let settings = context::settings_with(
        &home,
        &project,
        &common.settings,
        common.trust,
        common.setting_sources.as_ref(),
        &common.plugin_dirs,
    )?;
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
            return "replaced by a later entry".to_owned();
        }
        let plugin = s.plugin.as_ref().and_then(|id| settings.plugins.iter().find(|p| &p.id == id));
        match plugin {
            Some(plugin) if s.approval.starts() => {
                format!("approved (plugin {}, enabled by {})", plugin.id, plugin.enabled_by)
            }
            _ => s.approval.to_string(),
        }
    };
    // What the untrusted project brings, counted: the sentence `spine hooks list` ends with too.
    let sentence = crate::withheld::Withheld::of(&settings, &project).sentence(&project);
    let withheld: Vec<Value> = spine_agent::withheld_plugins(&settings)
        .map(|(file, id)| json!({"plugin": id, "enabled_by": file.display().to_string()}))
        .collect();
    if args.common.output_format != OutputFormat::Text {
        let rows: Vec<Value> = servers
            .iter()
            .map(|s| {
                let mut row = json!({
                    "name": s.name,
                    "source": s.source,
                    "approved": s.effective,
                    "status": status(s),
                    "plugin": s.plugin,
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
        let out = json!({"servers": rows, "withheld_plugins": withheld, "withheld": sentence});
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(exit::OK);
    }
    let plugins_note =
        spine_agent::withheld_plugins_text(&settings).map(|text| format!("{text}: their MCP servers do not start"));
    if servers.is_empty() {
        println!("no MCP servers configured");
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
    if let Some(note) = plugins_note {
        println!("{note}");
    }
    if let Some(sentence) = sentence {
        println!("{sentence}");
    }
    Ok(exit::OK)
}
