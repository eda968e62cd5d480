// The operator's policy file, in the format OpenStack services read (`policy.yaml`): a YAML (or
// JSON) mapping of rule name to check string. Read once at start; what is wrong in it stops the
// start with the file's name and the rule's (the engine checks names and check strings).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { PolicyError } from './policy.js';

export function readPolicyFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new PolicyError(`cannot read the policy file ${path}: ${(err as Error).message}`);
  }
  let data: unknown;
  try {
    data = parse(text);
  } catch (err) {
    throw new PolicyError(`the policy file ${path} is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data)) throw new PolicyError(`the policy file ${path} must be a mapping of rule names to check strings`);
  const rules: Record<string, string> = {};
  for (const [name, check] of Object.entries(data as Record<string, unknown>)) {
    if (typeof check !== 'string')
      throw new PolicyError(`policy rule "${name}" in ${path}: the check must be a string, e.g. "role:admin" (got ${JSON.stringify(check)})`);
    rules[name] = check;
  }
  return rules;
}
