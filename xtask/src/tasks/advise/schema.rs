//! The columns of a user's table, read from a `CREATE TABLE` in a .sql file or from a D1
//! migrations folder (its .sql files in name order, `ALTER TABLE ... ADD/DROP COLUMN` and
//! `DROP TABLE` applied as they come), parsed by `sqlparser` with SQLite's dialect.

use std::path::{Path, PathBuf};

use sqlparser::ast::{AlterTableOperation, ObjectType, Statement};
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;

use super::BadInput;

/// One table as the schema leaves it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    /// Its columns, in order.
    pub columns: Vec<String>,
    /// The file that created it.
    pub file: PathBuf,
}

/// The .sql files of `path`: itself, or a folder's, in name order (D1 numbers its migrations).
fn files(path: &Path) -> Result<Vec<PathBuf>, BadInput> {
    if !path.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let entries = std::fs::read_dir(path)
        .map_err(|e| BadInput(format!("cannot read {}: {e}", path.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sql"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(BadInput(format!(
            "{}: no .sql file in this folder",
            path.display()
        )));
    }
    Ok(files)
}

/// `Expected: ..., found: x at Line: 3, Column: 7` as `file:3:7: Expected: ..., found: x`.
fn located(file: &Path, message: &str) -> String {
    let (text, line, column) = match message.rsplit_once(" at Line: ") {
        Some((text, at)) => match at.split_once(", Column: ") {
            Some((line, column)) => (text, line.trim(), column.trim()),
            None => (message, "1", "1"),
        },
        None => (message, "1", "1"),
    };
    format!("{}:{line}:{column}: cannot parse: {text}", file.display())
}

/// Every table `path` leaves defined, in the order they were created.
pub fn tables(path: &Path) -> Result<Vec<Table>, BadInput> {
    let mut tables: Vec<Table> = Vec::new();
    let last = |name: &sqlparser::ast::ObjectName| {
        name.0
            .last()
            .map(|p| p.to_string().trim_matches(['"', '`', '[', ']']).to_owned())
            .unwrap_or_default()
    };
    for file in files(path)? {
        let sql = std::fs::read_to_string(&file)
            .map_err(|e| BadInput(format!("cannot read {}: {e}", file.display())))?;
        let statements = Parser::parse_sql(&SQLiteDialect {}, &sql)
            .map_err(|e| BadInput(located(&file, &e.to_string())))?;
        for statement in statements {
            match statement {
                Statement::CreateTable(create) => {
                    let name = last(&create.name);
                    tables.retain(|t| !t.name.eq_ignore_ascii_case(&name));
                    tables.push(Table {
                        name,
                        columns: create
                            .columns
                            .iter()
                            .map(|c| c.name.value.clone())
                            .collect(),
                        file: file.clone(),
                    });
                }
                Statement::AlterTable(alter) => {
                    let name = last(&alter.name);
                    let Some(table) = tables
                        .iter_mut()
                        .find(|t| t.name.eq_ignore_ascii_case(&name))
                    else {
                        continue;
                    };
                    for operation in alter.operations {
                        match operation {
                            AlterTableOperation::AddColumn { column_def, .. } => {
                                table.columns.push(column_def.name.value)
                            }
                            AlterTableOperation::DropColumn { column_names, .. } => table
                                .columns
                                .retain(|c| !column_names.iter().any(|d| d.value == *c)),
                            AlterTableOperation::RenameTable { table_name } => {
                                table.name = table_name.to_string()
                            }
                            _ => {}
                        }
                    }
                }
                Statement::Drop {
                    object_type: ObjectType::Table,
                    names,
                    ..
                } => {
                    for dropped in names {
                        let name = last(&dropped);
                        tables.retain(|t| !t.name.eq_ignore_ascii_case(&name));
                    }
                }
                _ => {}
            }
        }
    }
    Ok(tables)
}

/// The table to advise on: the one named, or the only one.
pub fn pick(path: &Path, name: Option<&str>) -> Result<Table, BadInput> {
    let tables = tables(path)?;
    let names = || {
        tables
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (name, tables.len()) {
        (_, 0) => Err(BadInput(format!(
            "{}: no CREATE TABLE in it",
            path.display()
        ))),
        (Some(name), _) => tables
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
            .cloned()
            .ok_or_else(|| {
                BadInput(format!(
                    "{}: no table named `{name}`; its tables are: {}",
                    path.display(),
                    names()
                ))
            }),
        (None, 1) => Ok(tables[0].clone()),
        (None, _) => Err(BadInput(format!(
            "{}: {} tables ({}); name one with --table",
            path.display(),
            tables.len(),
            names()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_migrations_folder_is_read_in_order_with_its_alterations() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("0001_init.sql"),
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT);\n\
             CREATE TABLE old (a TEXT);",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("0002_more.sql"),
            "ALTER TABLE users ADD COLUMN bio TEXT;\nALTER TABLE users DROP COLUMN email;\n\
             DROP TABLE old;\nCREATE INDEX users_name ON users (name);",
        )
        .unwrap();
        let table = pick(dir.path(), None).unwrap();
        assert_eq!(table.name, "users");
        assert_eq!(table.columns, ["id", "name", "bio"]);
    }

    #[test]
    fn a_statement_it_cannot_parse_is_named_at_its_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("schema.sql");
        std::fs::write(
            &file,
            "CREATE TABLE t (a TEXT);\nCREATE TABLE u (a TEXT,, b);\n",
        )
        .unwrap();
        let err = pick(&file, None).unwrap_err().0;
        assert!(err.starts_with(&format!("{}:2:", file.display())), "{err}");
    }

    #[test]
    fn several_tables_ask_for_one_and_a_missing_one_names_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("schema.sql");
        std::fs::write(
            &file,
            "CREATE TABLE a (x TEXT); CREATE TABLE b (y TEXT, z TEXT);",
        )
        .unwrap();
        assert!(
            pick(&file, None)
                .unwrap_err()
                .0
                .contains("name one with --table")
        );
        assert_eq!(pick(&file, Some("b")).unwrap().columns.len(), 2);
        let err = pick(&file, Some("c")).unwrap_err().0;
        assert!(
            err.contains("no table named `c`; its tables are: a, b"),
            "{err}"
        );
    }
}
