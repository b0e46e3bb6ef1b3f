//! `--model` specs: `scripted:FILE`, `openai:MODEL` (chat completions),
//! `openai-responses:MODEL` (the Responses API), `anthropic:MODEL`, and the bare names
//! Claude Code users type: `claude-*` and the aliases `sonnet`, `opus`, `haiku` mean Anthropic;
//! `gpt-*`, `o1`–`o4` (alone or followed by `-…`) and `chatgpt-*` mean OpenAI. The aliases map
//! to model ids through [`ANTHROPIC_ALIASES`], the one table of them.

use std::path::PathBuf;
use std::str::FromStr;

use thiserror::Error;

/// When [`ANTHROPIC_ALIASES`] was last checked against Claude Code's aliases (Claude Code
/// 2.1.197's model table, for the Anthropic API). Update the ids and this date together.
pub const ALIASES_CHECKED: &str = "2026-12-01";

/// The model id `sonnet` means (also the default Anthropic model).
pub const SONNET: &str = "claude-sonnet-5";
/// The model id `opus` means.
pub const OPUS: &str = "claude-opus-4-8";
/// The model id `haiku` means.
pub const HAIKU: &str = "claude-haiku-4-5";

/// Claude Code's model aliases and the Anthropic model ids they mean, as of
/// [`ALIASES_CHECKED`].
pub const ANTHROPIC_ALIASES: &[(&str, &str)] = &[("sonnet", SONNET), ("opus", OPUS), ("haiku", HAIKU)];

/// A parsed model spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    /// The offline scripted model.
    Scripted(PathBuf),
    /// An OpenAI-compatible chat-completions model.
    OpenAi(String),
    /// An OpenAI Responses API model.
    OpenAiResponses(String),
    /// An Anthropic Messages model.
    Anthropic(String),
}

/// A spec that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "invalid model spec `{0}`: expected scripted:FILE, openai:MODEL, openai-responses:MODEL, anthropic:MODEL, a \
     claude-*, gpt-*, o1-o4 or chatgpt-* model name, or sonnet, opus or haiku"
)]
pub struct SpecError(pub String);

/// The model id an Anthropic alias means, or `name` itself.
pub fn resolve_anthropic_alias(name: &str) -> &str {
    ANTHROPIC_ALIASES.iter().find(|(alias, _)| *alias == name).map_or(name, |(_, id)| id)
}

impl ModelSpec {
    /// The spec `ANTHROPIC_MODEL` names: always Anthropic (as in Claude Code, whatever the
    /// name, so a proxy's own names work), aliases resolved, an `anthropic:` prefix allowed.
    pub fn anthropic_named(name: &str) -> Option<ModelSpec> {
        let name = name.trim();
        let name = name.strip_prefix("anthropic:").unwrap_or(name);
        (!name.is_empty()).then(|| ModelSpec::Anthropic(resolve_anthropic_alias(name).to_owned()))
    }

    /// The provider of a bare model name, if its form names one.
    fn bare(name: &str) -> Option<ModelSpec> {
        if name.starts_with("claude-") || ANTHROPIC_ALIASES.iter().any(|(alias, _)| *alias == name) {
            return Some(ModelSpec::Anthropic(resolve_anthropic_alias(name).to_owned()));
        }
        let o_series = ["o1", "o2", "o3", "o4"]
            .iter()
            .any(|o| name.strip_prefix(o).is_some_and(|rest| rest.is_empty() || rest.starts_with('-')));
        if name.starts_with("gpt-") || name.starts_with("chatgpt-") || o_series {
            return Some(ModelSpec::OpenAi(name.to_owned()));
        }
        None
    }
}

impl FromStr for ModelSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let Some((provider, rest)) = s.split_once(':') else {
            return ModelSpec::bare(s).ok_or_else(|| SpecError(s.to_owned()));
        };
        if rest.is_empty() {
            return Err(SpecError(s.to_owned()));
        }
        match provider {
            "scripted" => Ok(ModelSpec::Scripted(PathBuf::from(rest))),
            "openai" => Ok(ModelSpec::OpenAi(rest.to_owned())),
            "openai-responses" => Ok(ModelSpec::OpenAiResponses(rest.to_owned())),
            "anthropic" => Ok(ModelSpec::Anthropic(resolve_anthropic_alias(rest).to_owned())),
            _ => Err(SpecError(s.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_by_provider_prefix() {
        assert_eq!("scripted:a.json".parse(), Ok(ModelSpec::Scripted("a.json".into())));
        assert_eq!("openai:gpt-4.1".parse(), Ok(ModelSpec::OpenAi("gpt-4.1".into())));
        assert_eq!("openai-responses:o4-mini".parse(), Ok(ModelSpec::OpenAiResponses("o4-mini".into())));
        assert!("openai-responses:".parse::<ModelSpec>().is_err());
        assert_eq!("anthropic:claude-sonnet-4-5".parse(), Ok(ModelSpec::Anthropic("claude-sonnet-4-5".into())));
        assert!("openai:".parse::<ModelSpec>().is_err());
        assert!("mistral:large".parse::<ModelSpec>().is_err());
    }

    #[test]
    fn bare_claude_names_and_aliases_mean_anthropic() {
        assert_eq!("claude-opus-4-1".parse(), Ok(ModelSpec::Anthropic("claude-opus-4-1".into())));
        assert_eq!("sonnet".parse(), Ok(ModelSpec::Anthropic(SONNET.into())));
        assert_eq!("opus".parse(), Ok(ModelSpec::Anthropic(OPUS.into())));
        assert_eq!("haiku".parse(), Ok(ModelSpec::Anthropic(HAIKU.into())));
        assert_eq!("anthropic:opus".parse(), Ok(ModelSpec::Anthropic(OPUS.into())));
    }

    #[test]
    fn bare_gpt_o_series_and_chatgpt_names_mean_openai() {
        for name in ["gpt-4", "gpt-4.1-mini", "o1", "o3-mini", "o4-mini", "chatgpt-4o-latest"] {
            assert_eq!(name.parse(), Ok(ModelSpec::OpenAi(name.into())), "{name}");
        }
    }

    #[test]
    fn other_bare_names_are_errors() {
        for name in ["llama3", "o5", "o1x", "sonnet-4", "", "gpt4"] {
            assert!(name.parse::<ModelSpec>().is_err(), "{name}");
        }
    }

    #[test]
    fn anthropic_model_variable_is_always_anthropic_with_aliases_resolved() {
        assert_eq!(ModelSpec::anthropic_named("haiku"), Some(ModelSpec::Anthropic(HAIKU.into())));
        assert_eq!(ModelSpec::anthropic_named("my-proxy-model"), Some(ModelSpec::Anthropic("my-proxy-model".into())));
        assert_eq!(ModelSpec::anthropic_named(" "), None);
    }
}
