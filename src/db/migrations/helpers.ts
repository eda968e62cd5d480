import type { CreateTableBuilder } from 'kysely';

export type MigrationDialect = 'sqlite' | 'postgres';

/** An integer primary key that the database numbers itself. */
export function idColumn<T extends string>(table: CreateTableBuilder<T, never>, dialect: MigrationDialect) {
  return dialect === 'postgres'
    ? table.addColumn('id', 'serial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

export function timestamps<T extends string, C extends string>(table: CreateTableBuilder<T, C>) {
  return table.addColumn('created_at', 'varchar(32)', (c) => c.notNull()).addColumn('updated_at', 'varchar(32)', (c) => c.notNull());
}
