/** See count-queries.mjs: statements sent by this process since the counter was installed. */
export function installStatementCounter(): { pg_queries: number; sqlite_statements: number };
