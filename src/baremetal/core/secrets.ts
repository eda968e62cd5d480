// What Ironic shows of a node's secrets: `driver_info` (BMC credentials) and `instance_info`
// (a config drive, an image URL that may carry a temporary credential) have every value whose
// key names a secret replaced by "******", unless policy says `show_password` /
// `show_instance_secrets` (by default nobody, administrators included). The keys are oslo.utils'
// list (strutils._SANITIZE_KEYS), matched within the lower-cased key as Ironic matches them.
// Unlike oslo.utils, secrets written inside other values' text ("--password x") are not looked for.

const SECRET_KEYS = [
  'adminpass',
  'admin_pass',
  'password',
  'admin_password',
  'auth_token',
  'new_pass',
  'auth_password',
  'secret_uuid',
  'secret',
  'sys_pswd',
  'token',
  'configdrive',
  'chappassword',
  'encrypted_key',
  'private_key',
  'fernetkey',
  'sslkey',
  'passphrase',
  'cephclusterfsid',
  'octaviaheartbeatkey',
  'rabbitcookie',
  'cephmanilaclientkey',
  'pacemakerremoteauthkey',
  'designaterndckey',
  'cephadminkey',
  'heatauthencryptionkey',
  'cephclientkey',
  'keystonecredential',
  'barbicansimplecryptokek',
  'cephrgwkey',
  'swifthashsuffix',
  'migrationsshkey',
  'cephmdskey',
  'cephmonkey',
];

export const MASK = '******';

const isSecretKey = (key: string) => {
  const k = key.toLowerCase();
  return SECRET_KEYS.some((s) => k.includes(s));
};

/** The document with every secret-named value masked, in nested objects too (lists are left as they are, as Ironic leaves them). */
export function maskSecrets(doc: unknown): unknown {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return doc;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) {
    out[k] = v !== null && typeof v === 'object' && !Array.isArray(v) ? maskSecrets(v) : isSecretKey(k) ? MASK : v;
  }
  return out;
}

/** `instance_info` as Ironic shows it: secrets masked, and `image_url` too (it may be a temporary URL that grants access). */
export function maskInstanceSecrets(doc: unknown): unknown {
  const masked = maskSecrets(doc);
  if (masked !== null && typeof masked === 'object' && !Array.isArray(masked) && (masked as Record<string, unknown>).image_url)
    (masked as Record<string, unknown>).image_url = MASK;
  return masked;
}
