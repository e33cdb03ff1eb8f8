//! The view of the skills search shows, and the triggers that keep the
//! index's `visible` column by reading it (migration 24).
//!
//! Before, each of the 12 triggers spelled out [`VISIBLE`](super::VISIBLE)
//! once or twice (about 13 KB of the schema, three pages of a 1,000-skill
//! store); now they read one view of it, which SQLite flattens into the
//! same lookup of the skill by name. The triggers of migrations 21–23 stay
//! as they were shipped ([`shown_triggers`](super::shown_triggers)).

/// The view: the names of the held skills search shows ([`VISIBLE`](super::VISIBLE)).
macro_rules! shown_view {
    () => {
        concat!(
            "CREATE VIEW skill_search_shown AS SELECT s.name FROM skills s WHERE ",
            $crate::store::search::visible!(),
            ";\n"
        )
    };
}
pub(crate) use shown_view;

/// The triggers of [`shown_triggers`](super::shown_triggers), each setting
/// `visible` from the view ([`shown_view`]).
macro_rules! shown_view_triggers {
    ($(($table:literal, $column:literal, $of:literal)),*) => {
        concat!($(
            "CREATE TRIGGER IF NOT EXISTS skill_search_shown_", $table, "_insert AFTER INSERT ON ", $table,
            " BEGIN ", $crate::store::search::shown_view_update!("NEW", $column), " END;\n",
            "CREATE TRIGGER IF NOT EXISTS skill_search_shown_", $table, "_delete AFTER DELETE ON ", $table,
            " BEGIN ", $crate::store::search::shown_view_update!("OLD", $column), " END;\n",
            "CREATE TRIGGER IF NOT EXISTS skill_search_shown_", $table, "_update AFTER UPDATE ", $of, " ON ", $table,
            " BEGIN ", $crate::store::search::shown_view_update!("OLD", $column),
            $crate::store::search::shown_view_update!("NEW", $column), " END;\n",
        )*)
    };
}
pub(crate) use shown_view_triggers;

/// Sets `visible` of the skill named by `$row.$column` in a trigger, from the view.
macro_rules! shown_view_update {
    ($row:literal, $column:literal) => {
        concat!(
            "UPDATE skill_search_docs SET visible = EXISTS (SELECT 1 FROM skill_search_shown v ",
            "WHERE v.name = skill_search_docs.name) WHERE name = ",
            $row,
            ".",
            $column,
            ";"
        )
    };
}
pub(crate) use shown_view_update;
