//! The files each command family reads and writes, one table test per rule of
//! [`super::operands`], [`super::special`] and [`super::scripts`].

use super::file_table::TABLES;
use super::*;

/// The known files of a command: `R path`, `W path`, `RW path`, with ` (tree)` or
/// ` (within)`; computed operands are `R ?`, `W ?`, `RW ?`.
fn files(command: &str) -> Vec<String> {
    let mut out: Vec<String> = analyze(command)
        .files
        .iter()
        .map(|f| {
            let access = match (f.access.read, f.access.write) {
                (true, true) => "RW",
                (true, false) => "R",
                (false, true) => "W",
                (false, false) => "-",
            };
            let path = match &f.path {
                OperandPath::Computed(_) => "?".to_owned(),
                other => other.text(),
            };
            let reach = match f.reach {
                Reach::Path => "",
                Reach::Tree => " (tree)",
                Reach::Within => " (within)",
            };
            format!("{access} {path}{reach}")
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[track_caller]
fn table(rows: &[(&str, &[&str])]) {
    let mut failures = Vec::new();
    for (command, expected) in rows {
        let got = files(command);
        let mut want: Vec<String> = expected.iter().map(|s| (*s).to_owned()).collect();
        want.sort();
        if got != want {
            failures.push(format!("{command:?}: expected {want:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn readers_read_their_operands_and_not_their_options_values() {
    table(&[
        ("cat a b", &["R a", "R b"]),
        ("cat -n -- -x", &["R -x"]),
        ("cat - a", &["R a"]),
        ("head -n 5 a", &["R a"]),
        ("head -n5 -c 3 a", &["R a"]),
        ("head -5 a", &["R a"]),
        ("head --lines 5 a", &["R a"]),
        ("head --lin=5 a", &["R a"]),
        ("tail -f -n +5 a.log", &["R a.log"]),
        ("tail -s 2 --pid 7 a", &["R a"]),
        ("less -N a", &["R a"]),
        ("less -o log.txt a", &["R a", "W log.txt"]),
        ("more -n 3 a", &["R a"]),
        ("wc -l a b", &["R a", "R b"]),
        ("cut -d , -f 1 a", &["R a"]),
        ("cut -d, -f1 a", &["R a"]),
        ("uniq -c a", &["R a"]),
        ("diff a b", &["R a", "R a/b", "R b", "R b/a"]),
        ("diff -u -C 3 a b", &["R a", "R a/b", "R b", "R b/a"]),
        ("cmp -n 10 a b", &["R a", "R b"]),
        ("od -A x -t x1 a", &["R a"]),
        ("od -w16 a", &["R a"]),
        ("hexdump -C -n 64 a", &["R a"]),
        ("hexdump -f fmt a", &["R a", "R fmt"]),
        ("strings -n 8 a", &["R a"]),
        ("base64 -w 0 a", &["R a"]),
        ("base64 -d a", &["R a"]),
        ("md5sum a b", &["R a", "R b"]),
        ("sha256sum a", &["R a"]),
        ("file -b a", &["R a"]),
        ("nl -b a -w 3 f", &["R f"]),
        ("tac -s x a", &["R a"]),
        ("cat ~/notes.txt", &["R ~/notes.txt"]),
        ("cat '~/notes.txt'", &["R ./~/notes.txt"]),
        ("cat ~root/x", &["R ?"]),
    ]);
}

#[test]
fn sort_o_is_a_write() {
    table(&[
        ("sort a", &["R a"]),
        ("sort -o out.txt a", &["R a", "W out.txt"]),
        ("sort -oout.txt a", &["R a", "W out.txt"]),
        ("sort --output=out.txt a", &["R a", "W out.txt"]),
        ("sort --out out.txt a", &["R a", "W out.txt"]),
        ("sort -k 2 -t , a", &["R a"]),
        ("sort -rno out.txt a", &["R a", "W out.txt"]),
        ("sort --compress-program=gzip a", &["R a", "RW ?"]),
    ]);
}

#[test]
fn uniq_and_xxd_read_their_input_and_write_their_output_operand() {
    table(&[
        ("uniq a b", &["R a", "W b"]),
        ("uniq -f 1 a b", &["R a", "W b"]),
        ("xxd a", &["R a"]),
        ("xxd -r hex bin", &["R hex", "W bin"]),
        ("xxd -c 8 -s 16 a out", &["R a", "W out"]),
        ("xxd -cols 8 a", &["R a"]),
        ("xxd -c8 a", &["R a"]),
    ]);
}

#[test]
fn grep_reads_the_operands_after_its_pattern() {
    table(&[
        ("grep KEY .env", &["R .env"]),
        ("grep -n -i KEY a b", &["R a", "R b"]),
        ("grep -e KEY a", &["R a"]),
        ("grep -e KEY -e OTHER a", &["R a"]),
        ("grep --regexp=KEY a", &["R a"]),
        ("grep -f patterns a", &["R a", "R patterns"]),
        ("grep -A 3 -m1 KEY a", &["R a"]),
        ("egrep 'a|b' a", &["R a"]),
        ("fgrep -x KEY a", &["R a"]),
        ("grep -r KEY src", &["R src (tree)"]),
        ("grep -rn KEY", &["R . (tree)"]),
        ("grep -d recurse KEY src", &["R src (tree)"]),
        ("grep KEY", &[]),
        ("grep --exclude-from=ex KEY a", &["R a", "R ex"]),
        ("rg KEY", &["R . (tree)"]),
        ("rg -n KEY src a.txt", &["R a.txt (tree)", "R src (tree)"]),
        ("rg -e KEY src", &["R src (tree)"]),
        ("rg --files src", &["R src (tree)"]),
        ("rg -g '*.rs' -t rust KEY src", &["R src (tree)"]),
        ("rg --pre cat KEY", &["R . (tree)", "RW ?"]),
    ]);
}

#[test]
fn sed_in_place_reads_and_writes_its_operands() {
    table(&[
        ("sed s/a/b/ f", &["R f"]),
        ("sed -n -e s/a/b/p f g", &["R f", "R g"]),
        ("sed -i s/a/b/ locked.txt", &["RW locked.txt"]),
        ("sed --in-place s/a/b/ locked.txt", &["RW locked.txt"]),
        ("sed -i.bak s/a/b/ f", &["RW f", "W f.bak"]),
        ("sed -i'bak/*.old' s/a/b/ d/f", &["RW d/f", "W d/bak/f.old"]),
        ("sed -Ei -e s/a/b/ f", &["RW f"]),
        ("sed -f script.sed f", &["R f", "R script.sed", "RW ?"]),
        ("sed --sandbox -f script.sed f", &["R f", "R script.sed"]),
        ("sed -n '1,/x/p;$d' f", &["R f"]),
        ("sed '1i header' f", &["R f"]),
        ("sed 'y/abc/xyz/;s|a|b|g' f", &["R f"]),
    ]);
}

#[test]
fn a_sed_script_that_opens_files_or_runs_commands_is_computed() {
    for script in ["r .env", "1r .env", "R x", "w out", "s/a/b/w out", "s/a/b/e", "e cat .env", "/x/W out", "?"] {
        let command = format!("sed '{script}' f");
        assert!(files(&command).contains(&"RW ?".to_owned()), "{command}: {:?}", files(&command));
    }
    assert!(!files("sed --sandbox 'r .env' f").contains(&"RW ?".to_owned()));
}

#[test]
fn awk_and_jq_read_their_input_operands_and_their_programs_are_scanned() {
    table(&[
        ("awk '{print $1}' a", &["R a"]),
        ("awk -F: -v x=1 '{print}' a b", &["R a", "R b"]),
        ("awk '{print}' n=1 a", &["R a"]),
        ("awk -f prog.awk a", &["R a", "R prog.awk", "RW ?"]),
        ("awk '{print > \"out\"}' a", &["R a", "RW ?"]),
        ("awk 'BEGIN{while((getline l < \".env\")>0) print l}'", &["RW ?"]),
        ("awk 'BEGIN{system(\"cat .env\")}'", &["RW ?"]),
        ("awk 'BEGIN{ARGV[1]=\".env\"; ARGC=2} {print}'", &["RW ?"]),
        ("jq .a data.json", &["R data.json"]),
        ("jq -r --arg k v '.[$k]' a.json", &["R a.json"]),
        ("jq --slurpfile s x.json -n '$s'", &["R x.json"]),
        ("jq -f filter.jq a.json", &["R a.json", "R filter.jq"]),
        ("jq -n '$ARGS' --args a b", &[]),
        ("jq 'import \"x\" as $x; .' a.json", &["R a.json", "R ?"]),
    ]);
}

#[test]
fn the_copy_family_reads_sources_and_writes_the_destination_and_what_lands_in_it() {
    table(&[
        ("cp .env out.txt", &["R .env", "W out.txt", "W out.txt/.env"]),
        ("cp -T a b", &["R a", "W b"]),
        ("cp a b dir/", &["R a", "R b", "W dir/", "W dir/a", "W dir/b"]),
        ("cp -t dir a b", &["R a", "R b", "W dir", "W dir/a", "W dir/b"]),
        ("cp -r src dst", &["R src (tree)", "W dst (tree)", "W dst/src (tree)"]),
        ("cp --parents a/b dst", &["R a/b", "W dst", "W dst/a/b"]),
        ("cp -s .env link", &["RW .env", "W link", "W link/.env"]),
        ("mv a b", &["RW a (tree)", "W b (tree)", "W b/a (tree)"]),
        ("mv -S .old -T a b", &["RW a (tree)", "W b (tree)"]),
        ("install -m 644 a /usr/local/bin/a", &["R a", "W /usr/local/bin/a", "W /usr/local/bin/a/a"]),
        ("install -d d1 d2", &["W d1", "W d2"]),
        ("ln a b", &["RW a (tree)", "W b (tree)", "W b/a (tree)"]),
        ("ln -s .env", &["RW .env (tree)", "RW ./.env (tree)", "W . (tree)", "W ./.env (tree)"]),
        (
            "ln -s ../.env sub/l",
            &[
                "RW ../.env (tree)",
                "RW sub/../.env (tree)",
                "RW sub/l/../.env (tree)",
                "W sub/l (tree)",
                "W sub/l/.env (tree)",
            ],
        ),
    ]);
}

#[test]
fn writers_write_their_operands() {
    table(&[
        ("rm a b", &["W a", "W b"]),
        ("rm -rf dir", &["W dir (tree)"]),
        ("rm -- -f", &["W -f"]),
        ("unlink a", &["W a"]),
        ("rmdir -p a/b", &["W a/b"]),
        ("shred -n 3 -u a", &["W a"]),
        ("truncate -s 0 a", &["W a"]),
        ("touch -d yesterday a", &["W a"]),
        ("mkdir -p -m 700 a/b", &["W a/b"]),
        ("chmod 644 a", &["W a"]),
        ("chmod -w a", &["W a"]),
        ("chmod -R u+x d", &["W d (tree)"]),
        ("chmod --reference=r a", &["W a"]),
        ("chown user:group a", &["W a"]),
        ("chown -R user d", &["W d (tree)"]),
        ("chgrp --reference r a", &["W a"]),
        ("dd if=.env of=out bs=1M", &["R .env", "W out"]),
        ("dd if=~/x", &["R ./~/x", "R ~/x"]),
    ]);
}

#[test]
fn redirections_read_and_write_files() {
    table(&[
        ("wc -l < .env", &["R .env"]),
        ("wc -l <a", &["R a"]),
        ("cat 3< a", &["R a"]),
        ("echo x > locked.txt", &["W locked.txt"]),
        ("echo x >> a 2> b &> c", &["W a", "W b", "W c"]),
        ("echo x | tee a -a b", &["W a", "W b"]),
        ("echo x > /dev/null", &[]),
        ("echo x > $F", &["W ?"]),
        ("cat <<< .env", &[]),
        ("cat <<EOF\n.env\nEOF", &[]),
        ("cat <(cat .env)", &["R .env"]),
    ]);
}

#[test]
fn an_input_redirection_is_a_read() {
    table(&[("cat < .env", &["R .env"]), ("while read l; do :; done < .env", &["R .env"])]);
}

#[test]
fn every_part_of_a_compound_command_and_every_nested_script_is_read() {
    table(&[
        ("true && cat a; (cat b) | { cat c; }", &["R a", "R b", "R c"]),
        ("bash -c 'cat a'", &["R a"]),
        ("sudo cat a", &["R a"]),
        ("env X=1 nice -n 5 cat a", &["R a"]),
        ("echo $(cat a)", &["R a"]),
        ("if true; then head a; fi", &["R a"]),
    ]);
}

#[test]
fn source_reads_its_script_and_a_bare_name_is_looked_up_in_path() {
    table(&[("source ./env.sh", &["R ./env.sh"]), (". .env", &["R .env", "R ?"])]);
}

#[test]
fn tar_and_zip_inputs_are_read_and_archives_written() {
    table(&[
        ("tar czf out.tgz src a", &["R a (tree)", "R src (tree)", "W out.tgz"]),
        ("tar -cf out.tar -C dir x", &["R dir/x (tree)", "R x (tree)", "W out.tar"]),
        ("tar -xzf in.tgz", &["R in.tgz", "W . (within)"]),
        ("tar -xf in.tar -C dest", &["R in.tar", "W dest (within)"]),
        ("tar -xOf in.tar f", &["R in.tar"]),
        ("tar -tf in.tar", &["R in.tar"]),
        ("tar -cf out.tar -T list", &["R list", "R ?", "W out.tar"]),
        ("tar -cf x.tar --use-compress-program=gzip a", &["R a (tree)", "RW ?", "W x.tar"]),
        ("zip -r out.zip src", &["RW out.zip", "R src (tree)"]),
        ("zip -q out.zip a b -x '*.git*'", &["R a", "R b", "RW out.zip"]),
        ("zip -TT cmd out.zip a", &["R a", "RW ?", "RW out.zip"]),
    ]);
}

#[test]
fn a_computed_operand_is_computed() {
    table(&[
        ("cat $F", &["R ?"]),
        ("cat \"$F\"", &["R ?"]),
        ("cat \"$(ls)\"", &["R ?"]),
        ("rm \"$dir\"/x", &["W ?"]),
        ("sort \"$x\" a", &["R a", "R ?", "RW ?"]),
        ("head -n $N a", &["R a", "R ?"]),
        ("grep $P a", &["R a", "R ?"]),
        ("grep \"$P\" a", &["R a", "R ?"]),
        ("grep -e \"$P\" a", &["R a"]),
        ("cat \"./$F\"", &["R ?"]),
    ]);
}

#[test]
fn glob_operands_are_kept_as_patterns_and_globs_in_other_positions_shift_into_files() {
    table(&[
        ("cat .e*", &["R .e*"]),
        ("cat '.e*'", &["R .e*"]),
        ("rm {a,b}.txt", &["W {a,b}.txt"]),
        ("grep KEY *", &["R *"]),
        ("grep K* a", &["R K*", "R a"]),
        ("head -n * a", &["R *", "R a"]),
    ]);
    let analysis = analyze("cat '.e*'");
    assert!(matches!(analysis.files.first().map(|f| &f.path), Some(OperandPath::Literal(_))), "quoted: no pattern");
}

#[test]
fn shopt_or_glob_variables_make_every_pattern_computed() {
    table(&[
        ("shopt -s dotglob; cat *", &["R ?"]),
        ("GLOBIGNORE=x; cat *", &["R ?"]),
        ("BASHOPTS=dotglob bash -c 'cat *'", &["R ?"]),
    ]);
}

#[test]
fn an_assigned_home_makes_a_tilde_computed() {
    table(&[("HOME=/proj; cat ~/.env", &["R ?"]), ("for HOME in /x; do cat ~/y; done", &["R ?"])]);
}

#[test]
fn cd_targets_are_listed_and_unknown_ones_are_computed() {
    let dirs = |c: &str| analyze(c).dirs.iter().map(OperandPath::text).collect::<Vec<_>>();
    assert_eq!(dirs("cd /tmp && cat a"), ["/tmp"]);
    assert_eq!(dirs("cd sub; cat a"), ["sub"]);
    assert_eq!(dirs("cd"), ["~"]);
    assert!(matches!(analyze("cd -").dirs.as_slice(), [OperandPath::Computed(_)]));
    assert!(matches!(analyze("cd \"$D\"").dirs.as_slice(), [OperandPath::Computed(_)]));
    assert!(matches!(analyze("pushd /x; popd").dirs.as_slice(), [OperandPath::Literal(_), OperandPath::Computed(_)]));
    assert!(matches!(analyze("PWD=/etc; cd .").dirs.as_slice(), [OperandPath::Computed(_)]));
}

#[test]
fn commands_given_more_operands_at_run_time_get_a_computed_operand() {
    table(&[
        ("ls | xargs cat", &["R ?"]),
        ("ls | xargs -I{} cp {} dst", &["R ?", "RW ?", "W dst", "W ?"]),
        ("find . -name .env -exec cat {} \\;", &["R ?"]),
        ("find . -name .env -exec grep -H KEY {} +", &["R ?"]),
        ("find src -name '*.tmp' -delete", &["W src (tree)"]),
        ("find . -fprint out.txt", &["W out.txt"]),
    ]);
}

#[test]
fn more_line_readers_read_their_operands() {
    table(&[
        ("paste -d , a b", &["R a", "R b"]),
        ("join -t , -1 2 a b", &["R a", "R b"]),
        ("comm -12 a b", &["R a", "R b"]),
        ("fold -w 80 a", &["R a"]),
        ("fmt -w 72 a", &["R a"]),
        ("expand -t 4 a", &["R a"]),
        ("rev a", &["R a"]),
        ("iconv -f latin1 -t utf-8 -o out a", &["R a", "W out"]),
        ("hexdump --color a", &["R a"]),
        ("cat $'.env'", &["R .env"]),
        ("xargs -a .env echo", &["R .env"]),
        ("xargs -n 1 -a list cat", &["R ?", "R list"]),
    ]);
}

#[test]
fn a_wrapper_that_runs_its_command_elsewhere_makes_relative_paths_unknown() {
    for command in ["env -C / cat proj/.env", "env --chdir=/ cat x", "sudo -D / cat x", "find . -execdir cat ../x \\;"]
    {
        assert!(
            analyze(command).dirs.iter().any(|d| matches!(d, OperandPath::Computed(_))),
            "{command}: {:?}",
            analyze(command).dirs
        );
    }
    for command in ["env -u X cat a", "env grep -C 3 x a", "sudo -u me cat a", "find . -exec cat {} \\;"] {
        assert!(analyze(command).dirs.is_empty(), "{command}: {:?}", analyze(command).dirs);
    }
}

#[test]
fn posix_argument_order_adds_operands_only_when_posixly_correct_is_set() {
    table(&[("head a -n .env", &["R a"]), ("POSIXLY_CORRECT=1; head a -n .env", &["R -n", "R .env", "R a"])]);
}

#[test]
fn a_variable_that_gives_a_reader_options_or_a_program_is_computed() {
    table(&[
        ("LESSOPEN='|cat .env' less README.md", &["R README.md", "RW ?"]),
        ("TAR_OPTIONS=-x tar -tf a.tar", &["R a.tar", "RW ?"]),
        ("export GREP_OPTIONS='-f .env'; grep x a", &["R a", "RW ?"]),
    ]);
}

#[test]
fn commands_outside_the_table_have_no_file_operands() {
    table(&[("python3 x.py .env", &[]), ("ls -la .env", &[]), ("git show HEAD:.env", &[]), ("echo .env", &[])]);
}

#[test]
fn every_long_option_a_row_names_is_in_one_of_its_option_lists() {
    for spec in TABLES.iter().flat_map(|t| t.iter()) {
        let lists: Vec<&str> = [spec.long_value, spec.long_optional, spec.long_two, spec.long_flags].concat();
        let named = spec.files.iter().map(|(o, _)| *o).chain(spec.recursive.iter().copied());
        let named = named.chain(spec.instead_of_first.iter().copied()).chain(spec.runs.iter().copied());
        for option in named.chain(spec.lists.iter().copied()) {
            if let Some(long) = option.strip_prefix("--") {
                assert!(lists.contains(&option), "{:?}: --{long} is in no list", spec.names);
            } else {
                let c = option.chars().nth(1).unwrap_or(' ');
                let listed = spec.short_value.contains(c) || spec.short_optional.contains(c);
                let flag = !spec.files.iter().any(|(o, _)| *o == option);
                assert!(listed || flag, "{:?}: {option} names a file but takes no value", spec.names);
            }
        }
    }
}
