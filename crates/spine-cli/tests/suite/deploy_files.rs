//! The deployment and distribution files, checked statically (no container, cluster or network
//! here): every YAML file under `deploy/` and the release workflow parse; the compose stack and
//! the Kubernetes manifests have the structure the docs describe (services, ports, probe paths,
//! the sandbox's security options, grace periods longer than the drain); every `spine` command
//! line they hold — and those of docs/deploy.md — is one this binary accepts, flag by flag; the
//! mailbox URLs parse with the worker's own parser; the install script verifies the checksum
//! before installing, against a `file://` release it runs on here.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every document of a YAML file, as JSON values.
fn yaml(rel: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn yaml_one(rel: &str) -> Value {
    let mut docs = yaml(rel);
    assert_eq!(docs.len(), 1, "{rel}: one document");
    docs.remove(0)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().map_or_else(|| s.to_string(), str::to_owned)).collect())
        .unwrap_or_default()
}

/// The value after `flag` (`--flag VALUE` or `--flag=VALUE`).
fn flag_value(args: &[String], flag: &str) -> Option<String> {
    let eq = format!("{flag}=");
    args.iter()
        .enumerate()
        .find_map(|(i, a)| if a == flag { args.get(i + 1).cloned() } else { a.strip_prefix(&eq).map(str::to_owned) })
}

/// `30s`, `2m`, `500ms`, or bare seconds.
fn duration(text: &str) -> Duration {
    let text = text.trim();
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let n: u64 = number.parse().unwrap_or_else(|_| panic!("duration `{text}`"));
    match unit {
        "" | "s" => Duration::from_secs(n),
        "ms" => Duration::from_millis(n),
        "m" => Duration::from_secs(n * 60),
        other => panic!("duration `{text}`: unit `{other}`"),
    }
}

/// The worker's drain timeout as a command line sets it (default 30 s).
fn drain(args: &[String]) -> Duration {
    flag_value(args, "--drain-timeout").map_or(Duration::from_secs(30), |v| duration(&v))
}

fn listen_port(args: &[String]) -> u16 {
    let listen = flag_value(args, "--listen").expect("the worker serves --listen");
    listen.rsplit_once(':').and_then(|(_, p)| p.parse().ok()).unwrap_or_else(|| panic!("--listen {listen}"))
}

/// A Dockerfile instruction's JSON array (`ENTRYPOINT`, `CMD`).
fn dockerfile_exec(text: &str, instruction: &str) -> Vec<String> {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{instruction} ")))
        .unwrap_or_else(|| panic!("the Dockerfile has an {instruction}"));
    strings(&serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("{instruction} is a JSON array: {e}")))
}

/// Every `spine` command line of the deployment files and docs/deploy.md: (where, arguments).
fn command_lines() -> Vec<(String, Vec<String>)> {
    let mut lines = Vec::new();
    let dockerfile = read("deploy/Dockerfile");
    let entrypoint = dockerfile_exec(&dockerfile, "ENTRYPOINT");
    assert!(entrypoint.last().is_some_and(|p| p.ends_with("/spine")), "ENTRYPOINT ends with spine: {entrypoint:?}");
    lines.push(("deploy/Dockerfile CMD".to_owned(), dockerfile_exec(&dockerfile, "CMD")));

    let compose = yaml_one("deploy/compose.yaml");
    for (name, service) in compose["services"].as_object().expect("services") {
        if !service["image"].as_str().is_some_and(|i| i.starts_with("spine")) {
            continue;
        }
        let entry = strings(&service["entrypoint"]);
        let mut args = match entry.first() {
            Some(first) if first.ends_with("/spine") => entry[1..].to_vec(),
            Some(other) => panic!("compose {name}: entrypoint {other} is not spine"),
            None => Vec::new(),
        };
        args.extend(strings(&service["command"]));
        lines.push((format!("deploy/compose.yaml service {name}"), args));
    }

    for object in k8s_objects() {
        let containers = &object["spec"]["template"]["spec"]["containers"];
        for container in containers.as_array().into_iter().flatten() {
            if container["image"].as_str().is_some_and(|i| i.contains("spine")) {
                assert!(container["command"].is_null(), "the image's entrypoint runs spine");
                lines.push((
                    format!("deploy/k8s {} container", object["metadata"]["name"]),
                    strings(&container["args"]),
                ));
            }
        }
    }

    // docs/deploy.md: lines of its code blocks that start with `spine `.
    let mut in_code = false;
    for line in read("docs/deploy.md").lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if in_code && let Some(rest) = line.trim().strip_prefix("spine ") {
            let args = shlex::split(rest).unwrap_or_else(|| panic!("docs/deploy.md: {line}"));
            lines.push((format!("docs/deploy.md `{}`", line.trim()), args));
        }
    }
    lines
}

fn k8s_objects() -> Vec<Value> {
    let kustomization = yaml_one("deploy/k8s/kustomization.yaml");
    strings(&kustomization["resources"]).iter().flat_map(|file| yaml(&format!("deploy/k8s/{file}"))).collect()
}

/// The long and short flags `spine SUBCOMMAND --help` lists.
fn help_flags(subcommand: &str) -> Vec<String> {
    let out = Command::new(assert_cmd::cargo::cargo_bin("spine")).args([subcommand, "--help"]).output().expect("runs");
    assert!(out.status.success(), "spine {subcommand} --help: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .flat_map(|l| l.trim_start().split([' ', ',']).filter(|t| !t.is_empty()).take_while(|t| t.starts_with('-')))
        .map(|t| t.split(['=', '[', '<']).next().unwrap_or(t).to_owned())
        .collect()
}

#[test]
fn every_yaml_file_parses() {
    let mut files = vec!["deploy".to_owned()];
    let mut yamls = Vec::new();
    while let Some(dir) = files.pop() {
        for entry in std::fs::read_dir(repo().join(&dir)).expect("deploy/ exists") {
            let name = format!("{dir}/{}", entry.expect("entry").file_name().to_string_lossy());
            if repo().join(&name).is_dir() {
                files.push(name);
            } else if name.ends_with(".yaml") || name.ends_with(".yml") {
                yamls.push(name);
            }
        }
    }
    yamls.push(".github/workflows/release.yml".to_owned());
    assert!(yamls.len() >= 8, "{yamls:?}");
    for file in &yamls {
        let docs = yaml(file);
        assert!(!docs.is_empty() && docs.iter().all(Value::is_object), "{file}: every document is a mapping");
    }
    let settings = serde_json::from_str::<Value>(&read("deploy/settings.json")).expect("deploy/settings.json is JSON");
    assert_eq!(settings["sandbox"]["mode"], "workspace-write", "the compose workers keep the sandbox on");
}

#[test]
fn the_dockerfile_builds_with_the_oldest_rust_that_builds_and_runs_the_worker_unprivileged() {
    let text = read("deploy/Dockerfile");
    // The builder's Rust is the oldest that builds the locked tree: the highest `rust-version` of
    // the workspace's packages and of every dependency `cargo metadata` resolves for Linux.
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked"])
        .args(["--filter-platform", "x86_64-unknown-linux-gnu", "--manifest-path"])
        .arg(repo().join("Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let metadata: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let version = |v: &str| v.split('.').take(2).map(|n| n.parse::<u32>().unwrap_or(0)).collect::<Vec<_>>();
    let (oldest, package) = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|p| Some((p["rust_version"].as_str()?, p["name"].as_str()?)))
        .max_by_key(|(v, _)| version(v))
        .expect("a rust-version");
    let image = text.lines().find_map(|l| l.strip_prefix("ARG RUST_VERSION=")).expect("ARG RUST_VERSION");
    assert_eq!(version(image), version(oldest), "the builder's Rust {image}: {package} needs {oldest}");
    assert!(text.contains("FROM rust:${RUST_VERSION}-"), "a Rust builder stage");
    assert!(text.contains("cargo build --release --locked -p spine-llm-cli"));
    let runtime = text.rsplit("\nFROM ").next().expect("a runtime stage");
    assert!(runtime.starts_with("debian:") || runtime.starts_with("gcr.io/distroless/cc"), "{runtime}");
    let install = runtime.lines().find(|l| l.contains("apt-get install")).expect("packages");
    assert!(install.split_whitespace().any(|w| w == "bash"), "bash for hooks and the Bash tool: {install}");
    let user = runtime.lines().find_map(|l| l.strip_prefix("USER ")).expect("a USER");
    assert!(!user.starts_with('0') && !user.starts_with("root"), "non-root: {user}");
    let cmd = dockerfile_exec(&text, "CMD");
    assert_eq!(cmd.first().map(String::as_str), Some("worker"));
    let port = listen_port(&cmd);
    assert!(text.contains(&format!("EXPOSE {port}\n")));
    let health = text.split("HEALTHCHECK").nth(1).expect("a HEALTHCHECK");
    assert!(health.contains(&format!("http://127.0.0.1:{port}/healthz")), "{health}");
    assert!(read("deploy/Dockerfile.dockerignore").lines().any(|l| l == "target"));
}

#[test]
fn the_compose_stack_has_a_nats_cluster_three_workers_and_tracing() {
    let compose = yaml_one("deploy/compose.yaml");
    let services = compose["services"].as_object().expect("services");
    let named = |name: &str| services.get(name).unwrap_or_else(|| panic!("service {name}"));
    let seeds = ["nats-1", "nats-2", "nats-3"];
    for name in seeds {
        let nats = named(name);
        assert!(nats["image"].as_str().is_some_and(|i| i.starts_with("nats:")), "{name}: the official image");
        let args = strings(&nats["command"]);
        for expected in ["--jetstream", "--store_dir=/data", "--cluster_name=spine", &format!("--server_name={name}")] {
            assert!(args.iter().any(|a| a == expected), "{name}: {expected} in {args:?}");
        }
        let routes = flag_value(&args, "--routes").expect("--routes");
        assert!(seeds.iter().all(|s| routes.contains(&format!("nats://{s}:6222"))), "{name}: {routes}");
        let volume = strings(&nats["volumes"]).into_iter().find(|v| v.ends_with(":/data")).expect("a /data volume");
        let volume = volume.trim_end_matches(":/data");
        assert!(compose["volumes"].get(volume).is_some(), "{name}: volume {volume} is declared");
        assert!(nats["healthcheck"]["test"].to_string().contains("/healthz"));
    }

    let worker = named("worker");
    assert_eq!(worker["deploy"]["replicas"], 3);
    assert_eq!(worker["build"]["context"], "..");
    let dockerfile = worker["build"]["dockerfile"].as_str().expect("dockerfile");
    assert!(repo().join(dockerfile).is_file(), "{dockerfile}");
    let args = strings(&worker["command"]);
    assert_eq!(args.first().map(String::as_str), Some("worker"));
    let mailbox = flag_value(&args, "--mailbox").expect("--mailbox");
    assert!(mailbox.starts_with("nats://nats-1:4222,nats-2:4222,nats-3:4222?"), "{mailbox}");
    assert!(mailbox.split(['?', '&']).any(|o| o == "replicas=3"), "{mailbox}");
    let port = listen_port(&args);
    let health = worker["healthcheck"]["test"].to_string();
    assert!(["/readyz", "/healthz"].iter().any(|p| health.contains(&format!("127.0.0.1:{port}{p}"))), "{health}");
    let security = strings(&worker["security_opt"]);
    for opt in ["seccomp=unconfined", "apparmor=unconfined"] {
        assert!(security.iter().any(|s| s == opt), "the sandbox needs {opt}: {security:?}");
    }
    assert_eq!(strings(&worker["cap_drop"]), ["ALL"]);
    let grace = duration(worker["stop_grace_period"].as_str().expect("stop_grace_period"));
    assert!(grace > drain(&args), "stop_grace_period {grace:?} outlasts the drain");
    for (name, service) in services {
        for dependency in service["depends_on"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_else(|| strings(&service["depends_on"]))
        {
            assert!(services.contains_key(&dependency), "{name} depends on {dependency}");
        }
        for volume in strings(&service["volumes"]).iter().filter(|v| v.starts_with("./")) {
            let source = volume.split(':').next().expect("source");
            assert!(repo().join("deploy").join(source).is_file(), "{name}: {source}");
        }
    }

    // Spans: workers -> collector (OTLP/HTTP 4318) -> Jaeger (OTLP/gRPC 4317).
    let env = &worker["environment"];
    assert_eq!(env["OTEL_EXPORTER_OTLP_ENDPOINT"], "http://otel-collector:4318");
    assert!(env["ANTHROPIC_API_KEY"].as_str().is_some_and(|v| v.starts_with("${")), "keys come from the environment");
    named("jaeger");
    let collector = named("otel-collector");
    assert!(strings(&collector["volumes"]).iter().any(|v| v == "./otel-collector.yaml:/etc/otelcol/config.yaml:ro"));
    let config = yaml_one("deploy/otel-collector.yaml");
    assert_eq!(config["receivers"]["otlp"]["protocols"]["http"]["endpoint"], "0.0.0.0:4318");
    let pipeline = &config["service"]["pipelines"]["traces"];
    for kind in ["receivers", "exporters", "processors"] {
        for name in strings(&pipeline[kind]) {
            assert!(config[kind].get(&name).is_some(), "the pipeline's {kind} {name} is defined");
        }
    }
    let exporter = strings(&pipeline["exporters"]).into_iter().next().expect("an exporter");
    assert_eq!(config["exporters"][&exporter]["endpoint"], "jaeger:4317");
}

#[test]
fn the_kubernetes_manifests_probe_drain_and_reference_what_exists() {
    let kustomization = yaml_one("deploy/k8s/kustomization.yaml");
    for file in strings(&kustomization["resources"]) {
        assert!(repo().join("deploy/k8s").join(&file).is_file(), "{file}");
    }
    let objects = k8s_objects();
    let find = |kind: &str, name: &str| {
        objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{kind} {name}"))
    };
    let deployment = find("Deployment", "spine-worker");
    let pod = &deployment["spec"]["template"];
    let spec = &pod["spec"];
    let container = &spec["containers"][0];
    let args = strings(&container["args"]);
    assert_eq!(args.first().map(String::as_str), Some("worker"));
    assert!(!args.iter().any(|a| a == "--no-sandbox"), "the sandbox stays on");
    let port = listen_port(&args);
    let ports = container["ports"].as_array().expect("ports");
    let http = ports.iter().find(|p| p["containerPort"] == port).expect("the --listen port");
    let port_name = http["name"].as_str().expect("a named port");
    for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
        assert_eq!(container[probe]["httpGet"]["path"], path, "{probe}");
        let target = &container[probe]["httpGet"]["port"];
        assert!(target == port_name || *target == port, "{probe} port {target}");
    }
    let annotations = &pod["metadata"]["annotations"];
    assert_eq!(annotations["prometheus.io/port"], port.to_string());
    assert_eq!(annotations["prometheus.io/path"], "/metrics");
    let grace = spec["terminationGracePeriodSeconds"].as_u64().expect("terminationGracePeriodSeconds");
    assert!(Duration::from_secs(grace) > drain(&args) + Duration::from_secs(5), "{grace} s outlasts the drain");
    let mailbox = flag_value(&args, "--mailbox").expect("--mailbox");
    assert!(mailbox.split(['?', '&']).any(|o| o == "replicas=3"), "{mailbox}");

    let security = &container["securityContext"];
    assert_eq!(security["seccompProfile"]["type"], "Unconfined", "the sandbox creates namespaces");
    assert_eq!(security["appArmorProfile"]["type"], "Unconfined", "the sandbox mounts");
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(strings(&security["capabilities"]["drop"]), ["ALL"]);
    assert_eq!(spec["securityContext"]["runAsNonRoot"], true);

    let volumes: Vec<&str> =
        spec["volumes"].as_array().expect("volumes").iter().filter_map(|v| v["name"].as_str()).collect();
    for mount in container["volumeMounts"].as_array().expect("mounts") {
        assert!(volumes.contains(&mount["name"].as_str().unwrap_or_default()), "mount {mount}");
    }
    let settings = find("ConfigMap", "spine-worker");
    serde_json::from_str::<Value>(settings["data"]["settings.json"].as_str().expect("settings.json")).expect("JSON");
    for source in container["envFrom"].as_array().expect("envFrom") {
        find("ConfigMap", source["configMapRef"]["name"].as_str().expect("a ConfigMap"));
    }
    let keys: Vec<&Value> =
        container["env"].as_array().expect("env").iter().filter_map(|e| e["valueFrom"].get("secretKeyRef")).collect();
    assert!(
        keys.iter().any(|k| k["key"] == "ANTHROPIC_API_KEY") && keys.iter().all(|k| k["name"] == "spine-model-keys")
    );

    let service = find("Service", "spine-worker");
    for (label, value) in service["spec"]["selector"].as_object().expect("selector") {
        assert_eq!(&pod["metadata"]["labels"][label], value, "the Service selects the workers");
    }
    assert_eq!(service["spec"]["ports"][0]["targetPort"], port_name);

    let nats = yaml_one("deploy/k8s/nats-values.yaml");
    assert_eq!(nats["config"]["cluster"]["enabled"], true);
    assert_eq!(nats["config"]["cluster"]["replicas"], 3);
    assert_eq!(nats["config"]["jetstream"]["enabled"], true);
    assert_eq!(nats["config"]["jetstream"]["fileStore"]["enabled"], true);
    assert!(nats["config"]["jetstream"]["fileStore"]["pvc"]["size"].is_string());
    for pod in ["nats-0", "nats-1", "nats-2"] {
        assert!(mailbox.contains(&format!("{pod}.nats-headless:4222")), "{mailbox}");
    }
    assert!(read("deploy/k8s/README.md").contains("helm install nats nats/nats -f deploy/k8s/nats-values.yaml"));
}

#[test]
fn every_spine_command_line_is_one_the_binary_accepts() {
    let lines = command_lines();
    assert!(lines.len() >= 5, "{lines:?}");
    let mut problems = Vec::new();
    for (place, args) in &lines {
        let subcommand = args.first().unwrap_or_else(|| panic!("{place}: no subcommand"));
        let known = help_flags(subcommand);
        for arg in args.iter().skip(1).filter(|a| a.starts_with('-') && a.len() > 1) {
            let name = arg.split('=').next().unwrap_or(arg);
            if !known.iter().any(|k| k == name) {
                problems.push(format!("{place}: `spine {subcommand}` has no {name}"));
            }
        }
        // The whole line through the binary's own parser: `--help` last prints the help only
        // when every flag before it exists and every value parses.
        let out = Command::new(assert_cmd::cargo::cargo_bin("spine"))
            .args(args)
            .arg("--help")
            .env_remove("SPINE_MAILBOX")
            .output()
            .expect("runs");
        if !out.status.success() {
            problems.push(format!(
                "{place}: spine {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[cfg(feature = "nats")]
#[test]
fn every_mailbox_url_parses_with_the_workers_parser() {
    let mut urls: Vec<(String, String)> = command_lines()
        .into_iter()
        .filter_map(|(place, args)| flag_value(&args, "--mailbox").map(|url| (place, url)))
        .collect();
    urls.dedup_by(|a, b| a.1 == b.1);
    assert!(urls.len() >= 2, "{urls:?}");
    for (place, url) in urls {
        if let Err(e) = url.parse::<spine_worker::MailboxUrl>() {
            panic!("{place}: {e}");
        }
    }
}

#[test]
fn the_release_workflow_builds_the_four_targets_with_checksums_on_a_tag() {
    let workflow = yaml_one(".github/workflows/release.yml");
    assert!(strings(&workflow["on"]["push"]["tags"]).iter().any(|t| t.starts_with('v')), "on a tag");
    let build = &workflow["jobs"]["build"];
    let targets: Vec<String> = build["strategy"]["matrix"]["include"]
        .as_array()
        .expect("a matrix")
        .iter()
        .filter_map(|t| t["target"].as_str().map(str::to_owned))
        .collect();
    let expected =
        ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl", "x86_64-apple-darwin", "aarch64-apple-darwin"];
    assert_eq!(targets, expected);
    let steps = build["steps"].to_string();
    assert!(steps.contains("cargo zigbuild --release --locked -p spine-llm-cli"), "static musl builds");
    assert!(steps.contains("spine-${{ matrix.target }}.tar.gz.sha256") && steps.contains("sha256sum"));
    let release = &workflow["jobs"]["release"];
    assert_eq!(release["permissions"]["contents"], "write");
    let steps = release["steps"].to_string();
    assert!(steps.contains("sha256sum -c") && steps.contains("gh release create") && steps.contains("SHA256SUMS"));
    assert!(steps.contains("SHA256SUMS install.sh"), "the release carries the install script");
    // The assets the install script downloads are the ones the workflow uploads.
    assert!(read("scripts/install.sh").contains("asset=\"spine-$target.tar.gz\""));
}

#[test]
fn the_install_script_verifies_the_checksum_before_it_installs() {
    let script = repo().join("scripts/install.sh");
    let text = read("scripts/install.sh");
    assert!(text.starts_with("#!/bin/sh\n"), "POSIX sh");
    // `sh -n`, and `dash -n` where dash is (a strict POSIX shell).
    for shell in ["sh", "dash"].into_iter().filter(|s| *s == "sh" || Path::new("/bin").join(s).exists()) {
        let out = Command::new(shell).arg("-n").arg(&script).output().expect("runs");
        assert!(out.status.success(), "{shell} -n: {}", String::from_utf8_lossy(&out.stderr));
    }
    let verify = text.find("if [ \"$actual\" != \"$expected\" ]").expect("the checksum comparison");
    for later in ["tar -xzf", "mv -f"] {
        assert!(text.find(later).expect(later) > verify, "{later} comes after the verification");
    }
    for pipe in ["| sh", "| bash", "|sh", "|bash", "eval "] {
        assert!(!text.contains(pipe), "nothing downloaded runs in a shell: {pipe}");
    }

    // A release laid out on disk, fetched through file://: the right checksum installs, a wrong
    // one installs nothing.
    let (os, arch) = (std::env::consts::OS, std::env::consts::ARCH);
    let target = match os {
        "linux" => format!("{arch}-unknown-linux-musl"),
        "macos" => format!("{arch}-apple-darwin"),
        _ => return,
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let release = dir.path().join("releases/download/v0.0.1");
    let package = dir.path().join("package");
    std::fs::create_dir_all(&release).expect("mkdir");
    std::fs::create_dir_all(&package).expect("mkdir");
    std::fs::write(package.join("spine"), "#!/bin/sh\necho installed-spine\n").expect("write");
    let asset = format!("spine-{target}.tar.gz");
    let sh = |command: &str| {
        let out = Command::new("sh").args(["-c", command]).current_dir(dir.path()).output().expect("sh");
        assert!(out.status.success(), "{command}: {}", String::from_utf8_lossy(&out.stderr));
    };
    sh(&format!("chmod 755 package/spine && tar -czf releases/download/v0.0.1/{asset} -C package spine"));
    sh(&format!("cd releases/download/v0.0.1 && sha256sum {asset} > {asset}.sha256"));
    let install = |prefix: &Path| {
        Command::new("sh")
            .arg(&script)
            .args(["--version", "v0.0.1", "--prefix"])
            .arg(prefix)
            .env("SPINE_INSTALL_BASE_URL", format!("file://{}/releases", dir.path().display()))
            .output()
            .expect("install.sh runs")
    };
    let good = dir.path().join("good");
    let out = install(&good);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = Command::new(good.join("bin/spine")).output().expect("the installed file runs");
    assert_eq!(String::from_utf8_lossy(&run.stdout), "installed-spine\n");

    std::fs::write(release.join(format!("{asset}.sha256")), format!("{}  {asset}\n", "0".repeat(64))).expect("write");
    let bad = dir.path().join("bad");
    let out = install(&bad);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("checksum mismatch"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!bad.join("bin/spine").exists(), "nothing installed");
}
