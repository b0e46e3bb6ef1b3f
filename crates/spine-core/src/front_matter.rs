//! YAML front matter of Markdown files (skills, custom commands, agent definitions): an
//! optional block between a first line `---` and the next line `---`, parsed into the caller's
//! type; the rest is the body. A file without the opening `---` has no front matter (the
//! default value) and is all body.

use serde::de::DeserializeOwned;

/// Splits `text` into its parsed front matter and its body. An opening `---` without a closing
/// one, or YAML that does not parse into `T`, is an error saying so.
pub fn parse<T: DeserializeOwned + Default>(text: &str) -> Result<(T, &str), String> {
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else {
        return Ok((T::default(), text));
    };
    let (yaml, body) = if let Some(body) = rest.strip_prefix("---") {
        ("", body)
    } else {
        let end = rest.find("\n---").ok_or("front matter has no closing `---`")?;
        (&rest[..end], &rest[end + 4..])
    };
    // The rest of the closing line, then the body.
    let body = body.split_once('\n').map_or("", |(_, body)| body);
    if yaml.trim().is_empty() {
        return Ok((T::default(), body));
    }
    let value = serde_saphyr::from_str::<T>(yaml).map_err(|e| format!("invalid front matter: {e}"))?;
    Ok((value, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, serde::Deserialize, PartialEq)]
    struct Meta {
        description: Option<String>,
    }

    #[test]
    fn front_matter_is_optional_and_separates_the_body() {
        let (meta, body) = parse::<Meta>("---\ndescription: Fix it\n---\nBody $ARGUMENTS\n").expect("parses");
        assert_eq!(meta.description.as_deref(), Some("Fix it"));
        assert_eq!(body, "Body $ARGUMENTS\n");
        let (meta, body) = parse::<Meta>("Just a body\n").expect("no front matter");
        assert_eq!((meta, body), (Meta::default(), "Just a body\n"));
        let (meta, body) = parse::<Meta>("---\n---\nbody").expect("empty front matter");
        assert_eq!((meta, body), (Meta::default(), "body"));
        assert!(parse::<Meta>("---\ndescription: x\nno end").is_err());
        assert!(parse::<Meta>("---\ndescription: [unclosed\n---\n").is_err());
    }
}
