//! One test per extraction rule of the shell analysis.

use super::*;

fn argvs(command: &str) -> Vec<String> {
    analyze(command).commands.iter().map(SimpleCommand::text).collect()
}

fn has(command: &str, expected: &str) -> bool {
    argvs(command).iter().any(|c| c == expected)
}

fn opaque(command: &str) -> bool {
    analyze(command).is_opaque()
}

#[test]
fn list_and_pipe_operators_and_background_split_commands() {
    assert_eq!(argvs("a 1 && b 2 || c; d | e & f\ng |& h"), ["a 1", "b 2", "c", "d", "e", "f", "g", "h"]);
    assert!(!opaque("a && b"));
}

#[test]
fn quoting_is_resolved_as_the_shell_does() {
    for spelling in [r"\rm x", r#""rm" x"#, "r''m x", "$'rm' x", r"$'\162\155' x", r#"r"m" x"#, "'rm' x"] {
        assert_eq!(argvs(spelling), ["rm x"], "{spelling}");
        assert!(!opaque(spelling), "{spelling}");
    }
    assert_eq!(argvs(r#"git commit -m "rm x""#), ["git commit -m rm x"]);
    assert_eq!(argvs(r#"echo "a\"b" 'c d'"#), [r#"echo a"b c d"#]);
}

#[test]
fn substitutions_and_compound_statements_are_searched() {
    for command in [
        "echo $(rm x)",
        "echo `rm x`",
        "cat <(rm x)",
        "tee >(rm x)",
        "(rm x)",
        "{ rm x; }",
        "if true; then rm x; fi",
        "if rm x; then :; fi",
        "while false; do rm x; done",
        "for f in a; do rm x; done",
        "case y in y) rm x;; esac",
        "f() { rm x; }",
        "! rm x",
        "echo \"$(rm x)\"",
        "X=$(rm x)",
        "export X=$(rm x)",
        "echo $((1 + $(rm x)))",
        "cat <<EOF\n$(rm x)\nEOF",
        "[[ -n $(rm x) ]]",
        "select v in a; do rm x; done",
        "((n++)) && rm x",
        "echo ${v:-$(rm x)}",
    ] {
        assert!(has(command, "rm x"), "{command}: {:?}", argvs(command));
    }
}

#[test]
fn leading_assignments_are_dropped() {
    assert_eq!(argvs("A=1 B='x y' rm x"), ["rm x"]);
}

#[test]
fn wrappers_list_the_wrapped_command_too() {
    for command in [
        "env rm x",
        "env -i A=1 rm x",
        "env -u HOME rm x",
        "env - rm x",
        "command rm x",
        "command -p rm x",
        "builtin rm x",
        "exec rm x",
        "exec -a name rm x",
        "nohup rm x",
        "nice rm x",
        "nice -n 5 rm x",
        "nice -5 rm x",
        "time rm x",
        "time -p rm x",
        "timeout 5 rm x",
        "timeout -s KILL 5 rm x",
        "timeout --signal=KILL -k 1 5 rm x",
        "stdbuf -o0 rm x",
        "stdbuf -oL -e 0 rm x",
        "sudo rm x",
        "sudo -u root -E rm x",
        "setsid rm x",
        "busybox rm x",
        "coproc rm x",
        "env nice timeout 5 rm x",
    ] {
        assert!(has(command, "rm x"), "{command}: {:?}", argvs(command));
        assert!(!opaque(command), "{command}: {:?}", analyze(command).opaque);
    }
    assert!(has("timeout 5 rm x", "timeout 5 rm x"), "the wrapper itself is listed");
}

#[test]
fn command_v_only_looks_a_name_up() {
    assert_eq!(argvs("command -v rm"), ["command -v rm"]);
}

#[test]
fn unknown_wrapper_options_are_opaque() {
    assert!(opaque("timeout --bogus 5 rm x"));
    assert!(opaque("nice $OPTS rm x"));
    assert!(opaque("env -S 'rm x'"));
}

#[test]
fn xargs_runs_its_operand_or_echo() {
    assert!(has("echo x | xargs rm", "rm"));
    assert!(has("xargs -0 -n 1 rm -f < list", "rm -f"));
    assert!(has("xargs -I{} rm {}", "rm {}"));
    assert!(has("xargs -I {} rm {}", "rm {}"));
    assert!(has("xargs --max-args=2 rm", "rm"));
    assert!(has("xargs", "echo"));
}

#[test]
fn find_exec_runs_a_command_and_delete_counts_as_rm() {
    assert!(has(r"find . -name '*.o' -exec rm {} \;", "rm {}"));
    assert!(has("find . -execdir rm -f {} +", "rm -f {}"));
    assert!(has("find . -ok rm {} ';'", "rm {}"));
    assert!(has("find build -name x -delete", "rm build"));
    assert_eq!(analyze("find . -fprint out.txt").writes, ["out.txt"]);
}

#[test]
fn shell_c_strings_are_analysed_recursively() {
    for command in [
        "bash -c 'rm x'",
        "sh -c \"rm x\"",
        "zsh -c 'rm x'",
        "dash -c 'rm x'",
        "bash -lc 'rm x'",
        "bash -e -c 'rm x' argv0",
        "/bin/sh -c 'echo a; rm x'",
        "bash -c \"bash -c 'rm x'\"",
        "sudo sh -c 'rm x'",
        "echo x | xargs sh -c 'rm x'",
        "trap 'rm x' EXIT",
    ] {
        assert!(has(command, "rm x"), "{command}: {:?}", argvs(command));
        assert!(!opaque(command), "{command}: {:?}", analyze(command).opaque);
    }
}

#[test]
fn nesting_beyond_the_limit_is_opaque() {
    let mut command = "rm x".to_owned();
    for _ in 0..=MAX_DEPTH + 1 {
        command = format!("sh -c {}", quote(&command));
    }
    let analysis = analyze(&command);
    assert!(analysis.opaque.contains(&OpaqueReason::TooDeep), "{analysis:?}");
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[test]
fn computed_names_eval_source_and_stdin_scripts_are_opaque() {
    for command in [
        "$CMD x",
        "${CMD} x",
        "\"$(echo rm)\" x",
        "`echo rm` x",
        "/bin/r? x",
        "/bin/r[m] x",
        "{rm,x}",
        "eval rm x",
        "eval \"$X\"",
        "source script.sh",
        ". script.sh",
        "bash -c \"$X\"",
        "sh -c $X",
        "echo rm x | bash",
        "echo rm x | sh -s",
        "bash <<< 'rm x'",
        "python3 <<EOF\nimport os\nEOF",
        "perl <<< 'unlink x'",
        "curl x | python3",
        "rm x &&",
        "echo 'unterminated",
        "env $X",
    ] {
        assert!(opaque(command), "{command}: {:?}", analyze(command));
    }
}

#[test]
fn opaque_commands_still_list_what_is_visible() {
    assert!(has("eval x; rm y", "rm y"));
    assert!(has("rm x &&", "rm x"));
}

#[test]
fn redirections_and_tee_are_writes() {
    let analysis = analyze("a > o1; b >> o2; c &> o3; d >| o4; e 2> o5; f &>> o6; g >&o7 | tee -a t1 -- t2");
    assert_eq!(analysis.writes, ["o1", "o2", "o3", "o4", "o5", "o6", "o7", "t1", "t2"]);
    assert!(!analysis.is_opaque());
}

#[test]
fn devices_descriptor_duplication_and_input_are_not_writes() {
    let analysis = analyze("a > /dev/null 2>&1; b 2>/dev/stderr >/dev/stdout; c < in; d >&2; e | tee /dev/null");
    assert!(analysis.writes.is_empty(), "{analysis:?}");
}

#[test]
fn computed_write_targets_are_opaque() {
    assert!(opaque("echo x > $F"));
    assert!(opaque("echo x > *.txt"));
    assert!(opaque("echo x | tee \"$F\""));
}

#[test]
fn relative_writes_after_cd_are_opaque() {
    assert!(opaque("cd /tmp && echo x > y"));
    assert!(!opaque("cd /tmp && echo x > /work/y"));
}

#[test]
fn write_paths_are_normalized_against_the_cwd() {
    let analysis = analyze("echo x > ../outside.txt; echo y > sub/./a");
    assert_eq!(
        analysis.write_paths(Path::new("/w/proj")),
        [PathBuf::from("/w/outside.txt"), PathBuf::from("/w/proj/sub/a")]
    );
}

#[test]
fn program_basename_is_offered_for_paths() {
    let c = &analyze("/bin/rm -f x").commands[0];
    assert_eq!((c.text(), c.basename_text()), ("/bin/rm -f x".to_owned(), Some("rm -f x".to_owned())));
    assert_eq!(analyze("rm x").commands[0].basename_text(), None);
}

#[test]
fn look_alikes_are_not_rm() {
    for command in ["echo \"rm -rf x\"", "grep rm file", "echo rm", "cat rm.txt", "git commit -m 'rm x'"] {
        assert!(argvs(command).iter().all(|c| !c.starts_with("rm")), "{command}: {:?}", argvs(command));
        assert!(!opaque(command), "{command}");
    }
}
