//! Building clients from specs, and choosing a spec when none was given.

use std::collections::HashMap;
use std::path::PathBuf;

use spine_models::factory::{client_for_vars, default_spec_from_vars};
use spine_models::spec::ModelSpec;
use spine_models::{AnthropicConfig, ClientError, OpenAiConfig, client_for};

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |name| map.get(name).cloned()
}

#[test]
fn default_spec_prefers_anthropic_then_openai_then_none() {
    let both = vars(&[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")]);
    assert_eq!(default_spec_from_vars(both), Some(ModelSpec::Anthropic(spine_models::DEFAULT_ANTHROPIC_MODEL.into())));
    let openai = vars(&[("ANTHROPIC_API_KEY", " "), ("OPENAI_API_KEY", "o")]);
    assert_eq!(default_spec_from_vars(openai), Some(ModelSpec::OpenAi("gpt-4.1".into())));
    assert_eq!(default_spec_from_vars(vars(&[])), None);
}

#[test]
fn missing_script_file_is_a_clear_error() {
    let spec = ModelSpec::Scripted(PathBuf::from("/nonexistent/script.json"));
    let err = client_for(&spec).err().expect("error");
    assert!(matches!(err, ClientError::Script(_)));
    assert!(err.to_string().starts_with("cannot read scripted model file /nonexistent/script.json"), "{err}");
}

#[test]
fn public_endpoints_need_a_key_but_local_servers_do_not() {
    let err = OpenAiConfig::from_vars("gpt-4.1", vars(&[])).expect_err("no key");
    assert_eq!(
        err.to_string(),
        "OPENAI_API_KEY is not set: https://api.openai.com/v1 needs an API key (set OPENAI_API_KEY, or point OPENAI_BASE_URL at a server that needs none)"
    );
    assert!(AnthropicConfig::from_vars("claude-x", vars(&[])).is_err());
    let local = OpenAiConfig::from_vars("llama", vars(&[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")])).expect("local");
    assert_eq!((local.base_url.as_str(), local.api_key.is_none()), ("http://127.0.0.1:9/v1", true));
    let anth = AnthropicConfig::from_vars("claude-x", vars(&[("ANTHROPIC_API_KEY", "k")])).expect("key");
    assert_eq!(anth.base_url, "https://api.anthropic.com");
    assert_eq!(anth.context_window, Some(200_000));
}

#[test]
fn specs_build_clients_of_their_provider() {
    let env = vars(&[
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
        ("ANTHROPIC_API_KEY", "k"),
    ]);
    let openai = client_for_vars(&ModelSpec::OpenAi("llama-3".into()), &env).expect("openai");
    assert_eq!(openai.model(), "llama-3");
    let anthropic = client_for_vars(&ModelSpec::Anthropic("claude-haiku".into()), &env).expect("anthropic");
    assert_eq!(anthropic.model(), "claude-haiku");
    let bad = client_for_vars(&ModelSpec::OpenAi("m".into()), vars(&[("OPENAI_BASE_URL", "ftp://x")]))
        .err()
        .expect("bad url");
    assert!(matches!(bad, ClientError::InvalidBaseUrl { .. }), "{bad}");
}

#[test]
fn anthropic_auth_token_is_a_credential_for_the_public_endpoint_and_selects_anthropic() {
    let env = vars(&[("ANTHROPIC_AUTH_TOKEN", "tok")]);
    let config = AnthropicConfig::from_vars("claude-x", &env).expect("a token is enough");
    assert_eq!(config.base_url, "https://api.anthropic.com");
    assert!(config.provider.auth_token.is_some() && config.api_key.is_none());
    assert_eq!(default_spec_from_vars(env), Some(ModelSpec::Anthropic(spine_models::DEFAULT_ANTHROPIC_MODEL.into())));
}

#[test]
fn anthropic_custom_headers_are_name_value_lines() {
    use spine_models::anthropic::parse_custom_headers;
    assert_eq!(
        parse_custom_headers("X-A: 1\n\n  X-B:two words  \n").expect("headers"),
        vec![("X-A".to_owned(), "1".to_owned()), ("X-B".to_owned(), "two words".to_owned())]
    );
    let err = parse_custom_headers("X-A 1").expect_err("no colon");
    assert_eq!(err.to_string(), "ANTHROPIC_CUSTOM_HEADERS: `X-A 1` is not a `Name: value` header line");
    assert!(parse_custom_headers(": v").is_err());
    let env = vars(&[("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"), ("ANTHROPIC_CUSTOM_HEADERS", "Bad Name: v")]);
    let config = AnthropicConfig::from_vars("claude-x", env).expect("parsed");
    assert!(matches!(spine_models::AnthropicClient::new(config), Err(ClientError::InvalidHeader { .. })));
}

#[test]
fn anthropic_model_variable_names_an_anthropic_model() {
    use spine_models::factory::anthropic_model_from_vars;
    assert_eq!(
        anthropic_model_from_vars(vars(&[("ANTHROPIC_MODEL", "opus")])),
        Some(ModelSpec::Anthropic(spine_models::spec::OPUS.into()))
    );
    assert_eq!(anthropic_model_from_vars(vars(&[])), None);
}

#[test]
fn cost_is_computed_from_reported_usage_with_settings_prices_over_the_table() {
    use spine_models::factory::client_with_vars;
    use spine_models::pricing::Price;
    use spine_protocol::run::Usage;
    let local = vars(&[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"), ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")]);
    let usage =
        Usage { input_tokens: 1_000_000, output_tokens: 100_000, cache_read_input_tokens: 200_000, ..Usage::default() };
    let builtin = client_with_vars(&ModelSpec::OpenAi("gpt-4o".into()), &Default::default(), &local).expect("client");
    // 0.8 M uncached × 2.5 + 0.2 M cached × 1.25 + 0.1 M out × 10.
    let cost = builtin.cost_usd(&usage).expect("gpt-4o is priced");
    assert!((cost - (2.0 + 0.25 + 1.0)).abs() < 1e-9, "{cost}");
    let unknown = client_with_vars(&ModelSpec::OpenAi("smollm2".into()), &Default::default(), &local).expect("client");
    assert_eq!(unknown.cost_usd(&usage), None, "a model without a price has no cost, not 0");
    let options = spine_models::ClientOptions {
        prices: vec![("smollm2".into(), Price { input: 1.0, output: 2.0, cache_write: 1.0, cache_read: 0.5 })],
        ..Default::default()
    };
    let priced = client_with_vars(&ModelSpec::OpenAi("smollm2".into()), &options, &local).expect("client");
    let cost = priced.cost_usd(&usage).expect("priced by settings");
    assert!((cost - (0.8 + 0.1 + 0.2)).abs() < 1e-9, "{cost}");
    let claude = client_with_vars(&ModelSpec::Anthropic("claude-sonnet-4-5".into()), &options, &local).expect("client");
    assert!(claude.cost_usd(&usage).is_some(), "the built-in rows stay");
}
