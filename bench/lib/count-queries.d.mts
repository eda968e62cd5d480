/** See count-queries.mjs: the statements a server preloaded with it has sent, read from its count file. */
export function statementsSent(countFile: string): Promise<number>;
