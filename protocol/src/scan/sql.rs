//! SQL and datastore destruction (category `SqlDestruction`).
//!
//! Migration guides drop tables in their rollback sections and test guides
//! recreate `myapp_test`, so severity follows the target: `DROP TABLE` is
//! Medium; dropping a whole database or schema is High, Medium when the
//! name says it is a test or scratch database, Critical when the line points
//! at production.

use std::sync::LazyLock;

use super::rule::{Hit, Lazy, Rule, compile};
use super::{Category, Severity};

static PROD: Lazy =
    LazyLock::new(|| compile(r"(?:^|[^a-z])(?:prod|production|live|primary|master|main)(?:[^a-z]|$)"));
static SCRATCH: Lazy = LazyLock::new(|| {
    compile(
        r"(?:^|[^a-z])(?:test|tests|tmp|temp|scratch|dev|local|ci|sandbox|restore|example|demo|e2e|spec|stage|staging|qa|uat|preview)(?:[^a-z]|$)",
    )
});
static DB_NAME: Lazy = LazyLock::new(|| {
    compile(
        r#"(?:\bdrop\s+(?:database|schema)(?:\s+if\s+exists)?|\bdropdb(?:\s+-\S+(?:\s+[^-\s]\S*)?)*)\s+[`"'\[]?([a-z0-9_.$-]+)"#,
    )
});

/// The line rules of this family.
pub(super) fn rules() -> Vec<Rule> {
    use Category::SqlDestruction as S;
    use Severity::*;
    vec![
        Rule::new(
            "sql.drop-database",
            S,
            High,
            &["drop database", "drop schema", "dropdb", "dropdatabase", "flushall"],
            r"\bdrop\s+(?:database|schema)\b|\bdropdb\s+\S|\.dropdatabase\s*\(|\bflushall\b",
        )
        .assess(drop_database)
        .warnable(),
        Rule::literal("sql.drop-table", S, Medium, &["drop table"]).assess(prod_is_worse),
        Rule::new(
            "sql.truncate",
            S,
            Medium,
            &["truncate"],
            r#"\btruncate\s+(?:table\s+)?[a-z0-9_."`]+(?:\s*,\s*[a-z0-9_."`]+)*\s*(?:;|$|restart\b|cascade\b|continue\b)"#,
        )
        .assess(prod_is_worse),
        Rule::new(
            "sql.delete-all",
            S,
            Medium,
            &["delete", "deletemany", "flushdb"],
            r#"\bdelete\s+from\s+[a-z0-9_."`]+[ \t]*(?:;|\r?\n|$)|\.deletemany\(\s*\{\s*\}\s*\)|\bflushdb\b"#,
        )
        .requires(&["from", "deletemany", "flushdb"])
        .assess(delete_all)
        .warnable()
        .span(1),
    ]
}

fn drop_database(h: &Hit<'_>) -> Option<Severity> {
    let line = h.line().as_bytes();
    let name = DB_NAME
        .captures(h.tail().as_bytes())
        .and_then(|c| c.get(1))
        .map(|m| m.as_bytes().to_vec())
        .unwrap_or_default();
    Some(if PROD.is_match(line) {
        Severity::Critical
    } else if !name.is_empty() && SCRATCH.is_match(&name) {
        Severity::Medium
    } else {
        h.base
    })
}

fn prod_is_worse(h: &Hit<'_>) -> Option<Severity> {
    Some(if PROD.is_match(h.line().as_bytes()) { Severity::High } else { h.base })
}

/// `DELETE FROM t` with its `WHERE` on the next line is a bounded delete.
fn delete_all(h: &Hit<'_>) -> Option<Severity> {
    if h.text().ends_with('\n') && h.after().trim_start().to_ascii_lowercase().starts_with("where") {
        return None;
    }
    prod_is_worse(h)
}

#[cfg(test)]
mod tests {
    use crate::scan::testutil::{assert_absent, assert_hit, assert_severity};
    use crate::scan::{Category::*, Severity::*};

    #[test]
    fn flags_drop_database() {
        assert_hit(
            "x\npsql -c 'DROP DATABASE app WITH (FORCE);'",
            "sql.drop-database",
            SqlDestruction,
            High,
            2,
        );
        assert_hit("DROP SCHEMA public CASCADE;", "sql.drop-database", SqlDestruction, High, 1);
        assert_hit(
            "psql -h db-prod.internal -c \"DROP DATABASE reporting;\"",
            "sql.drop-database",
            SqlDestruction,
            Critical,
            1,
        );
        assert_hit("redis-cli -h cache.example.com FLUSHALL", "sql.drop-database", SqlDestruction, High, 1);
    }

    #[test]
    fn keeps_test_database_resets_below_the_threshold() {
        assert_severity(
            "psql -h localhost -c 'DROP DATABASE IF EXISTS myapp_test;'",
            "sql.drop-database",
            Medium,
        );
        assert_severity("dropdb appdb_restore_test", "sql.drop-database", Medium);
    }

    #[test]
    fn keeps_drop_table_in_a_rollback_medium() {
        assert_hit("-- down\nDROP TABLE IF EXISTS invoices;", "sql.drop-table", SqlDestruction, Medium, 2);
        assert_absent("We drop the table lock after commit.", "sql.drop-table");
    }

    #[test]
    fn ignores_bounded_deletes() {
        assert_absent("DELETE FROM events\nWHERE created_at < now() - interval '90 days';", "sql.delete-all");
        assert_absent("DELETE FROM events WHERE id = 1;", "sql.delete-all");
        assert_severity("DELETE FROM events;", "sql.delete-all", Medium);
        assert_absent("Truncate the log file before you start.", "sql.truncate");
    }

    #[test]
    fn keeps_staging_refreshes_below_the_threshold() {
        assert_severity("dropdb -h db-staging.internal.example myapp_staging", "sql.drop-database", Medium);
    }
}
