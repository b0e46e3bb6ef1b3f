//! Which tool the model must call: the `model_options.tool_choice` setting's value.
//!
//! Contract: [`ToolChoice::parse`] reads the setting's text — `auto`, `required` (or `any`,
//! Anthropic's word), `none`, else the name of one tool; empty (or blank) text is no choice.
//! Each model wire writes the choice in its own format (spine-models); unset, no choice is
//! sent and the server's default applies. spine-core re-exports the type as
//! `spine_core::model::ToolChoice`.

/// Which tool the model must call (settings `model_options.tool_choice`); each wire writes it
/// in its own format. Unset, no choice is sent and the server's default applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides (`auto`).
    Auto,
    /// The model must call some tool (`required`; Anthropic's `any`).
    Required,
    /// The model must not call tools (`none`).
    None,
    /// The model must call this tool.
    Tool(String),
}

impl ToolChoice {
    /// `auto`, `required` (or `any`), `none`, else a tool name. Empty text is no choice.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "" => Option::None,
            "auto" => Some(ToolChoice::Auto),
            "required" | "any" => Some(ToolChoice::Required),
            "none" => Some(ToolChoice::None),
            name => Some(ToolChoice::Tool(name.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_choices_parse_from_their_words_else_name_a_tool() {
        assert_eq!(ToolChoice::parse("auto"), Some(ToolChoice::Auto));
        assert_eq!(ToolChoice::parse(" any "), Some(ToolChoice::Required));
        assert_eq!(ToolChoice::parse("required"), Some(ToolChoice::Required));
        assert_eq!(ToolChoice::parse("none"), Some(ToolChoice::None));
        assert_eq!(ToolChoice::parse("Read"), Some(ToolChoice::Tool("Read".to_owned())));
        assert_eq!(ToolChoice::parse("  "), None);
    }
}
