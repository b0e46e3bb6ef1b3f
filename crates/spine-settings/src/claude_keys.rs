//! The settings keys of Claude Code 2.1, as its schema lists them (recorded from 2.1.328 in
//! `crates/spine-cli/tests/fixtures/claude-code-2.1.328/hook-schema.json`; a test compares).
//!
//! These say what a key *is*, not what spine does with it: a key listed here and not read by
//! spine is ignored with a note, or with a warning where ignoring it would leave out something
//! the user relies on (see `settings.rs` and `merge.rs`). A key in neither list is unknown
//! ([`crate::unknown`]).

/// Top-level keys (with the keys of features Claude Code builds in conditionally).
pub const SETTINGS_KEYS: &[&str] = &[
    "$schema",
    "apiKeyHelper",
    "proxyAuthHelper",
    "awsCredentialExport",
    "awsAuthRefresh",
    "gcpAuthRefresh",
    "processWrapper",
    "policyHelper",
    "policyHelpers",
    "fileSuggestion",
    "respectGitignore",
    "breakReminder",
    "quietHours",
    "cleanupPeriodDays",
    "desktopSessionCleanupPeriodDays",
    "syncClaudeAiSkills",
    "syncClaudeAiPlugins",
    "skillListingMaxDescChars",
    "skillListingBudgetFraction",
    "wslInheritsWindowsSettings",
    "env",
    "attribution",
    "attributionProject",
    "attributionProjectPolicy",
    "includeCoAuthoredBy",
    "includeGitInstructions",
    "permissions",
    "model",
    "fallbackModel",
    "availableModels",
    "enforceAvailableModels",
    "availableModelsMatch",
    "deniedModels",
    "modelOverrides",
    "modelPicker",
    "modelPricing",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
    "disableClaudeAiConnectors",
    "skillOverrides",
    "disableBundledSkills",
    "managedMcpServers",
    "allowedMcpServers",
    "deniedMcpServers",
    "hooks",
    "worktree",
    "disableAllHooks",
    "disableReplyCheck",
    "disableAgentView",
    "disableRemoteControl",
    "disableWorkflows",
    "disableArtifact",
    "enableArtifact",
    "enableWorkflows",
    "workflowSizeGuideline",
    "workflowKeywordTriggerEnabled",
    "disableSkillShellExecution",
    "disableWindowsBashCommandSplit",
    "defaultShell",
    "bashEditDiffEnabled",
    "bashOutputMaxChars",
    "taskOutputMaxChars",
    "respondToBashCommands",
    "allowManagedHooksOnly",
    "allowedHttpHookUrls",
    "httpHookAllowedEnvVars",
    "allowManagedPermissionRulesOnly",
    "allowManagedMcpServersOnly",
    "allowAllClaudeAiMcps",
    "allowClaudeInChromeWithManagedMcp",
    "strictPluginOnlyCustomization",
    "statusLine",
    "prUrlTemplate",
    "footerLinksRegexes",
    "subagentStatusLine",
    "enabledPlugins",
    "prependPlugins",
    "appendPlugins",
    "extraKnownMarketplaces",
    "additionalMarketplaces",
    "strictKnownMarketplaces",
    "allowedMarketplaces",
    "blockedMarketplaces",
    "disableCommandPluginSources",
    "disableSideloadFlags",
    "pluginSuggestionMarketplaces",
    "forceLoginMethod",
    "forceLoginGatewayUrl",
    "gatewayInternalNetworks",
    "parentSettingsBehavior",
    "managedSourcesBehavior",
    "forceLoginOrgUUID",
    "allowNestedModelAccessUnderForceLogin",
    "allowedProviders",
    "forceRemoteSettingsRefresh",
    "otelHeadersHelper",
    "outputStyle",
    "viewMode",
    "language",
    "skipWebFetchPreflight",
    "sandbox",
    "feedbackSurveyRate",
    "feedbackDrafts",
    "spinnerTipsEnabled",
    "clawdFileProgressEnabled",
    "spinnerVerbs",
    "spinnerTipsOverride",
    "syntaxHighlightingDisabled",
    "maxProseWidth",
    "spellcheck",
    "terminalTitleFromRename",
    "promptCacheTtl",
    "subagentPromptCacheTtl",
    "alwaysThinkingEnabled",
    "effortLevel",
    "maxEffortLevel",
    "modelSettings",
    "ultracode",
    "autoCompactWindow",
    "advisorModel",
    "fastMode",
    "fastModePerSessionOptIn",
    "promptSuggestionEnabled",
    "emojiCompletionEnabled",
    "awaySummaryEnabled",
    "responseComparisonEnabled",
    "showClearContextOnPlanAccept",
    "askUserQuestionTimeout",
    "dialogExpiry",
    "agent",
    "modelProposedGoals",
    "companyAnnouncements",
    "pluginConfigs",
    "remote",
    "autoUpdatesChannel",
    "minimumVersion",
    "requiredMinimumVersion",
    "requiredMaximumVersion",
    "plansDirectory",
    "tui",
    "voice",
    "channelsEnabled",
    "allowedChannelPlugins",
    "prefersReducedMotion",
    "timeFormat",
    "timeZone",
    "doneMeansMerged",
    "totalTokensReminder",
    "totalTokensReminderBudget",
    "totalTokensReminderAfterUserTurn",
    "autoMemoryEnabled",
    "autoMemoryDirectory",
    "autoDreamEnabled",
    "showThinkingSummaries",
    "skipDangerousModePermissionPrompt",
    "skipWorkflowUsageWarning",
    "disableAutoMode",
    "remoteTools",
    "sshConfigs",
    "sshHostCommands",
    "claudeMd",
    "claudeMdExcludes",
    "pluginTrustMessage",
    "theme",
    "editorMode",
    "keybindingFlavor",
    "vimInsertModeRemaps",
    "verbose",
    "preferredNotifChannel",
    "autoCompactEnabled",
    "precomputeCompactionEnabled",
    "precomputeArmTokens",
    "autoCompactRaisedForLoad",
    "autoCompactOfferAnswer",
    "idleCompaction",
    "switchModelsOnFlag",
    "autoContinueAtUsageLimit",
    "autoScrollEnabled",
    "wheelScrollAccelerationEnabled",
    "fileCheckpointingEnabled",
    "showTurnDuration",
    "showMessageTimestamps",
    "terminalProgressBarEnabled",
    "todoFeatureEnabled",
    "teammateMode",
    "remoteControlAtStartup",
    "remoteControl",
    "isolatePeerMachines",
    "daemonColdStart",
    "crossSessionInbound",
    "remoteMessageReceipts",
    "autoUploadSessions",
    "inputNeededNotifEnabled",
    "agentPushNotifEnabled",
    "skipAutoPermissionPrompt",
    "useAutoModeDuringPlan",
    "autoMode",
    "disableDeepLinkRegistration",
    "voiceEnabled",
    "defaultView",
    "axScreenReader",
    "xaaIdp",
];

/// Keys of `permissions`.
pub const PERMISSIONS_KEYS: &[&str] = &[
    "allow",
    "deny",
    "ask",
    "defaultMode",
    "disableBypassPermissionsMode",
    "blockReadsOutsideWorkingDirectories",
    "blockFileToolReadsOutsideWorkingDirectories",
    "blockWritesOutsideWorkingDirectories",
    "blockReadsExemptPaths",
    "workingDirectoriesAsGiven",
    "disableAutoMode",
    "denyInsteadOfPrompting",
    "additionalDirectories",
];

/// Claude Code keys spine does not apply whose absence a user would want to hear about without
/// `-v`, with what is not applied. Any other Claude Code key spine does not read is a note.
pub const WARN_WHEN_IGNORED: &[(&str, &str)] = &[
    ("allowManagedMcpServersOnly", "spine does not apply managed-settings restrictions on MCP servers"),
    ("allowedMcpServers", "spine does not filter MCP servers by this list"),
    ("deniedMcpServers", "spine does not filter MCP servers by this list: listed servers still start"),
    ("availableModels", "spine does not restrict which models may be chosen"),
    ("deniedModels", "spine does not restrict which models may be chosen"),
    ("disableSkillShellExecution", "spine does not apply it"),
    ("claudeMd", "spine does not inject managed CLAUDE.md instructions"),
];

/// `permissions` keys of Claude Code that spine does not read, with what spine does instead;
/// each is a warning (a permission setting is never ignored silently).
pub const PERMISSIONS_NOT_APPLIED: &[(&str, &str)] = &[
    ("disableAutoMode", "spine has no auto mode, so there is nothing to disable"),
    (
        "blockReadsOutsideWorkingDirectories",
        "spine's file tools never read outside the workspace; commands are not confined without a sandbox",
    ),
    (
        "blockFileToolReadsOutsideWorkingDirectories",
        "spine's file tools never read outside the workspace, whatever this says",
    ),
    (
        "blockWritesOutsideWorkingDirectories",
        "spine's file tools never write outside the workspace; commands are not confined without a sandbox",
    ),
    ("blockReadsExemptPaths", "spine's file tools read only the workspace and the added directories"),
    ("workingDirectoriesAsGiven", "spine resolves the workspace roots as it always does"),
    ("denyInsteadOfPrompting", "an interactive session still asks; a non-interactive run denies what it would ask"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn schema() -> Value {
        let path =
            concat!(env!("CARGO_MANIFEST_DIR"), "/../spine-cli/tests/fixtures/claude-code-2.1.328/hook-schema.json");
        let text = std::fs::read_to_string(path).expect("the recorded schema");
        serde_json::from_str(&text).expect("json")
    }

    fn strings(v: &Value) -> Vec<String> {
        v.as_array().map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect()).unwrap_or_default()
    }

    #[test]
    fn the_key_lists_are_claude_codes_recorded_schema() {
        let schema = schema();
        let mut expected = strings(&schema["settings_keys"]);
        for feature in schema["settings_keys_feature_gated"].as_object().into_iter().flatten() {
            expected.extend(feature.1.as_object().into_iter().flatten().map(|(k, _)| k.clone()));
        }
        expected.extend(schema["settings_keys_conditional"].as_object().into_iter().flatten().map(|(k, _)| k.clone()));
        let mut listed: Vec<String> = SETTINGS_KEYS.iter().map(|k| (*k).to_owned()).collect();
        expected.sort();
        listed.sort();
        assert_eq!(listed, expected);
        let mut permissions = strings(&schema["permissions_keys"]);
        let mut listed: Vec<String> = PERMISSIONS_KEYS.iter().map(|k| (*k).to_owned()).collect();
        permissions.sort();
        listed.sort();
        assert_eq!(listed, permissions);
    }
}
