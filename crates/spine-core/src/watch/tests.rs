use std::time::Duration;

use super::*;

fn plan(files: bool, config: bool, names: &[&str], dynamic: &[&Path]) -> Plan {
    Plan {
        files,
        config,
        names: names.iter().map(|n| (*n).to_owned()).collect(),
        dynamic: dynamic.iter().map(|p| p.to_path_buf()).collect(),
    }
}

#[test]
fn matcher_names_are_the_matcher_split_on_bars() {
    let names = |m: &str| matcher_names(&Matcher::parse(m).expect("matcher"));
    assert_eq!(names(".envrc|.env"), [".envrc", ".env"]);
    assert_eq!(names("package.json"), ["package.json"]);
    assert_eq!(names("Makefile"), ["Makefile"]);
    assert!(names("*").is_empty() && names("").is_empty());
}

#[test]
fn names_are_looked_for_in_the_shells_directory_and_configuration_only_with_its_hooks() {
    let dir = tempfile::tempdir().expect("dir");
    let cwd = dir.path();
    let config = [ConfigFile::new(ConfigSource::Project, cwd.join(".claude/settings.json"))];
    let both = targets(&plan(true, true, &[".envrc", "/abs/.env"], &[cwd]), cwd, &config);
    let file = |p: PathBuf, scope| Target { path: p, interest: Interest::File, scope };
    assert_eq!(
        both,
        [
            file(cwd.join(".envrc"), Scope::Path),
            file(PathBuf::from("/abs/.env"), Scope::Path),
            file(cwd.to_path_buf(), Scope::Entries),
            Target {
                path: cwd.join(".claude/settings.json"),
                interest: Interest::Config(ConfigSource::Project),
                scope: Scope::Path
            },
        ]
    );
    let files_only = targets(&plan(true, false, &[".envrc"], &[]), cwd, &config);
    assert_eq!(files_only, [file(cwd.join(".envrc"), Scope::Path)]);
    assert!(targets(&plan(false, false, &[".envrc"], &[cwd]), cwd, &config).is_empty());
}

#[test]
fn the_shells_move_is_reported_once_and_arming_again_keeps_the_answered_paths() {
    let dir = tempfile::tempdir().expect("dir");
    let root = dir.path().to_path_buf();
    std::fs::create_dir(root.join("sub")).expect("sub");
    let watch = SessionWatch::new(root.clone());
    assert_eq!(watch.cwd_moved(), None);
    watch.shell_cwd().set(root.join("sub"));
    assert_eq!(watch.cwd_moved(), Some((root.clone(), root.join("sub"))));
    assert_eq!(watch.cwd_moved(), None, "reported once");
    assert_eq!(watch.hooks_cwd(), root.join("sub"));

    assert!(!watch.is_armed());
    assert_eq!(watch.replace_dynamic(vec![root.join("x")]), None, "nothing before the watch is armed");
    watch.arm(true, false, Vec::new(), Some(vec![root.join("a")]));
    watch.arm(true, false, Vec::new(), None);
    let state = watch.lock();
    assert_eq!(state.plan.as_ref().map(|p| p.dynamic.clone()), Some(vec![root.join("a")]));
}

#[tokio::test]
async fn a_named_file_written_in_the_shells_directory_is_seen_once_settled() {
    let dir = tempfile::tempdir().expect("dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let watch = SessionWatch::new(root.clone());
    assert_eq!(watch.arm(true, false, vec![".envrc".to_owned()], None), None);
    std::fs::write(root.join(".envrc"), "export A=1").expect("write");
    std::fs::write(root.join(".envrc"), "export A=2").expect("write");
    std::fs::write(root.join("other"), "x").expect("write");
    let mut seen = Vec::new();
    // The OS reports the writes asynchronously: wait for them, with a generous deadline.
    for _ in 0..100 {
        watch.settled().await;
        seen.extend(watch.take());
        if !seen.is_empty() && !watch.has_pending() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(seen, [Change::File { path: root.join(".envrc"), event: "add" }]);
}

/// Waits (generously) for the watch to report something settled, and takes it.
async fn next_changes(watch: &SessionWatch) -> Vec<Change> {
    for _ in 0..100 {
        watch.settled().await;
        let taken = watch.take();
        if !taken.is_empty() {
            return taken;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Vec::new()
}

#[tokio::test]
async fn a_settings_file_spine_wrote_itself_fires_no_config_change_but_another_write_does() {
    let dir = tempfile::tempdir().expect("dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let settings = root.join("settings.local.json");
    let other = root.join("settings.json");
    let watch = SessionWatch::new(root.clone()).with_config(vec![
        ConfigFile::new(ConfigSource::Local, settings.clone()),
        ConfigFile::new(ConfigSource::Project, other.clone()),
    ]);
    assert_eq!(watch.arm(false, true, Vec::new(), None), None);
    watch.written_by_spine(&settings);
    std::fs::write(&settings, "{}").expect("write");
    std::fs::write(&other, "{}").expect("write");
    // Both settle together; only the other file's change is reported.
    assert_eq!(next_changes(&watch).await, [Change::Config { source: ConfigSource::Project, path: other }]);
    std::fs::write(&settings, "{\"env\": {}}").expect("write");
    assert_eq!(next_changes(&watch).await, [Change::Config { source: ConfigSource::Local, path: settings }]);
}
