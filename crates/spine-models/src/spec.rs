//! `--model` specs: `scripted:FILE`, `openai:MODEL`, `anthropic:MODEL`.

use std::path::PathBuf;
use std::str::FromStr;

use thiserror::Error;

/// A parsed model spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    /// The offline scripted model.
    Scripted(PathBuf),
    /// An OpenAI-compatible chat-completions model.
    OpenAi(String),
    /// An Anthropic Messages model.
    Anthropic(String),
}

/// A spec that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid model spec `{0}`: expected scripted:FILE, openai:MODEL or anthropic:MODEL")]
pub struct SpecError(pub String);

impl FromStr for ModelSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (provider, rest) = s.split_once(':').ok_or_else(|| SpecError(s.to_owned()))?;
        if rest.is_empty() {
            return Err(SpecError(s.to_owned()));
        }
        match provider {
            "scripted" => Ok(ModelSpec::Scripted(PathBuf::from(rest))),
            "openai" => Ok(ModelSpec::OpenAi(rest.to_owned())),
            "anthropic" => Ok(ModelSpec::Anthropic(rest.to_owned())),
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
        assert_eq!("anthropic:claude-sonnet-4-5".parse(), Ok(ModelSpec::Anthropic("claude-sonnet-4-5".into())));
        assert!("gpt-4".parse::<ModelSpec>().is_err());
        assert!("openai:".parse::<ModelSpec>().is_err());
    }
}
