//! When export is on, where it goes, and what it may record.
//!
//! Export is on when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is
//! set (not empty), or when the settings give `telemetry.otlp.endpoint`; `OTEL_SDK_DISABLED=true`
//! turns it off. The environment wins over the settings, as everywhere in OpenTelemetry. The
//! protocol is `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, else
//! the settings' `telemetry.otlp.protocol`, else `http/protobuf`.
//!
//! Message content (prompts, replies, tool arguments and results, hook answers) is recorded
//! only with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.

use std::fmt;
use std::str::FromStr;

use crate::exporter::OtelError;

/// The variable that opts in to recording message content.
pub const CAPTURE_CONTENT_VAR: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// The OTLP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OTLP over HTTP with protobuf bodies (`http/protobuf`, port 4318); the default.
    HttpProtobuf,
    /// OTLP over gRPC (`grpc`, port 4317); needs spine built with the `grpc` feature.
    Grpc,
}

impl Protocol {
    /// The name used by `OTEL_EXPORTER_OTLP_PROTOCOL` and the settings.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::HttpProtobuf => "http/protobuf",
            Protocol::Grpc => "grpc",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Protocol {
    type Err = OtelError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "http/protobuf" => Ok(Protocol::HttpProtobuf),
            "grpc" => Ok(Protocol::Grpc),
            other => Err(OtelError::Config(format!(
                "OTLP protocol `{other}` is not supported (use `http/protobuf` or `grpc`)"
            ))),
        }
    }
}

/// Whether spans carry message content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContentCapture {
    /// Sizes, names, decisions and timings only (the default).
    #[default]
    Omit,
    /// Also prompts, replies, reasoning, tool arguments and results, hook answers.
    Record,
}

impl ContentCapture {
    /// [`ContentCapture::Record`] when [`CAPTURE_CONTENT_VAR`] is `true` (any case).
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> ContentCapture {
        match env(CAPTURE_CONTENT_VAR) {
            Some(v) if v.trim().eq_ignore_ascii_case("true") => ContentCapture::Record,
            Some(_) | None => ContentCapture::Omit,
        }
    }
}

/// The settings' `telemetry.otlp` section.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OtlpSettings {
    /// `telemetry.otlp.endpoint`: the collector's base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// (`http://127.0.0.1:4318`; `/v1/traces` is appended for HTTP).
    pub endpoint: Option<String>,
    /// `telemetry.otlp.protocol`.
    pub protocol: Option<Protocol>,
}

/// Where the exporter sends spans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// The `OTEL_EXPORTER_OTLP_*ENDPOINT` variables (the OTLP exporter reads them itself).
    Environment,
    /// The full URL from the settings.
    Url(String),
}

/// A resolved export configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportConfig {
    /// Where spans go.
    pub endpoint: Endpoint,
    /// How.
    pub protocol: Protocol,
    /// Whether spans carry message content.
    pub content: ContentCapture,
    /// `service.name` unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` set one.
    pub default_service_name: String,
}

impl ExportConfig {
    /// The configuration of this process: `None` when export is off. `env` reads a variable
    /// (`std::env::var(..).ok()` in the binary).
    pub fn resolve(
        settings: &OtlpSettings,
        default_service_name: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<ExportConfig>, OtelError> {
        let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let protocol = match set("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| set("OTEL_EXPORTER_OTLP_PROTOCOL")) {
            Some(name) => name.parse()?,
            None => settings.protocol.unwrap_or(Protocol::HttpProtobuf),
        };
        let endpoint =
            if set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some() || set("OTEL_EXPORTER_OTLP_ENDPOINT").is_some() {
                Endpoint::Environment
            } else {
                match settings.endpoint.as_deref().map(str::trim).filter(|e| !e.is_empty()) {
                    Some(base) => Endpoint::Url(match protocol {
                        Protocol::HttpProtobuf => format!("{}/v1/traces", base.trim_end_matches('/')),
                        Protocol::Grpc => base.to_owned(),
                    }),
                    None => return Ok(None),
                }
            };
        Ok(Some(ExportConfig {
            endpoint,
            protocol,
            content: ContentCapture::from_env(&env),
            default_service_name: default_service_name.to_owned(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |name| map.get(name).cloned()
    }

    fn resolve(settings: &OtlpSettings, pairs: &[(&str, &str)]) -> Option<ExportConfig> {
        ExportConfig::resolve(settings, "spine", env(pairs)).expect("valid")
    }

    #[test]
    fn export_is_off_without_an_endpoint_variable_or_setting() {
        assert_eq!(resolve(&OtlpSettings::default(), &[]), None);
        assert_eq!(resolve(&OtlpSettings::default(), &[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")]), None);
    }

    #[test]
    fn either_endpoint_variable_turns_export_on_and_the_exporter_reads_it() {
        for var in ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] {
            let config = resolve(&OtlpSettings::default(), &[(var, "http://127.0.0.1:4318")]).expect("on");
            assert_eq!(config.endpoint, Endpoint::Environment);
            assert_eq!(config.protocol, Protocol::HttpProtobuf);
            assert_eq!(config.content, ContentCapture::Omit);
        }
    }

    #[test]
    fn the_settings_endpoint_is_a_base_url_and_the_environment_wins_over_it() {
        let settings = OtlpSettings { endpoint: Some("http://collector:4318/".into()), protocol: None };
        assert_eq!(
            resolve(&settings, &[]).expect("on").endpoint,
            Endpoint::Url("http://collector:4318/v1/traces".into())
        );
        let env_wins = resolve(&settings, &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://other:4318")]).expect("on");
        assert_eq!(env_wins.endpoint, Endpoint::Environment);
        let grpc = OtlpSettings { endpoint: Some("http://collector:4317".into()), protocol: Some(Protocol::Grpc) };
        let config = resolve(&grpc, &[]).expect("on");
        assert_eq!((config.endpoint, config.protocol), (Endpoint::Url("http://collector:4317".into()), Protocol::Grpc));
    }

    #[test]
    fn the_protocol_variable_wins_over_the_setting_and_unknown_protocols_are_errors() {
        let settings = OtlpSettings { endpoint: Some("http://c:4317".into()), protocol: Some(Protocol::Grpc) };
        let config = resolve(&settings, &[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")]).expect("on");
        assert_eq!(config.protocol, Protocol::HttpProtobuf);
        let json =
            ExportConfig::resolve(&settings, "spine", env(&[("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json")]));
        assert!(json.is_err());
    }

    #[test]
    fn sdk_disabled_turns_export_off() {
        let on = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"), ("OTEL_SDK_DISABLED", "true")];
        assert_eq!(resolve(&OtlpSettings::default(), &on), None);
    }

    #[test]
    fn content_is_recorded_only_when_the_variable_is_true() {
        assert_eq!(ContentCapture::from_env(env(&[])), ContentCapture::Omit);
        assert_eq!(ContentCapture::from_env(env(&[(CAPTURE_CONTENT_VAR, "1")])), ContentCapture::Omit);
        assert_eq!(ContentCapture::from_env(env(&[(CAPTURE_CONTENT_VAR, "TRUE")])), ContentCapture::Record);
    }
}
