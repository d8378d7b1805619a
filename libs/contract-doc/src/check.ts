/**
 * The AsyncAPI 3.0 rules the published document must keep, checked without
 * a parser package (none installs offline here; docs/adr/0033): the version,
 * every reference resolving inside the document, every operation's channel
 * and messages existing (an operation's messages are its channel's, a
 * reply's its reply channel's), every message having a payload schema, and
 * every `{parameter}` of an address declared (and none declared that the
 * address lacks). Returns what is wrong, each naming where; empty: nothing.
 */
type Node = Record<string, unknown>;

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);
const COMPONENT_KEY = /^[a-zA-Z0-9.\-_]+$/;

/** Resolves a local JSON pointer (`#/channels/work/messages/x`). */
function resolve(doc: Node, pointer: string): unknown {
  if (!pointer.startsWith('#/')) return undefined;
  return pointer
    .slice(2)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((at, t) => (isNode(at) ? at[t] : undefined), doc);
}

function refOf(v: unknown): string | undefined {
  return isNode(v) && typeof v['$ref'] === 'string' ? v['$ref'] : undefined;
}

export function checkAsyncApi(doc: unknown): string[] {
  const problems: string[] = [];
  if (!isNode(doc)) return ['the document is not an object'];
  if (doc['asyncapi'] !== '3.0.0') problems.push(`asyncapi must be "3.0.0", is ${JSON.stringify(doc['asyncapi'])}`);
  const info = doc['info'];
  if (!isNode(info) || typeof info['title'] !== 'string' || typeof info['version'] !== 'string') problems.push('info must have a title and a version');

  // Every $ref anywhere resolves.
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}/${i}`));
    else if (isNode(v)) {
      const r = refOf(v);
      if (r !== undefined && resolve(doc, r) === undefined) problems.push(`${path}: $ref ${r} does not resolve`);
      for (const [k, x] of Object.entries(v)) walk(x, `${path}/${k}`);
    }
  };
  walk(doc, '#');

  const channels = isNode(doc['channels']) ? doc['channels'] : {};
  const components = isNode(doc['components']) ? doc['components'] : {};
  const messages = isNode(components['messages']) ? components['messages'] : {};
  for (const section of ['schemas', 'messages', 'securitySchemes']) {
    for (const key of Object.keys(isNode(components[section]) ? components[section] : {})) if (!COMPONENT_KEY.test(key)) problems.push(`components.${section}.${key}: not a valid component key`);
  }

  for (const [id, c] of Object.entries(channels)) {
    if (!isNode(c)) {
      problems.push(`channel ${id} is not an object`);
      continue;
    }
    const address = c['address'];
    if (address !== null && typeof address !== 'string') problems.push(`channel ${id}: address must be a string or null`);
    const inAddress = typeof address === 'string' ? [...address.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string) : [];
    const declared = Object.keys(isNode(c['parameters']) ? c['parameters'] : {});
    for (const p of inAddress) if (!declared.includes(p)) problems.push(`channel ${id}: address parameter {${p}} is not declared`);
    for (const p of declared) if (!inAddress.includes(p)) problems.push(`channel ${id}: parameter ${p} is not in its address`);
    if (!isNode(c['messages']) || Object.keys(c['messages']).length === 0) problems.push(`channel ${id}: no messages`);
  }

  for (const [id, m] of Object.entries(messages)) {
    const payload = isNode(m) ? m['payload'] : undefined;
    const schema = refOf(payload) !== undefined ? resolve(doc, refOf(payload) as string) : payload;
    if (!isNode(schema)) problems.push(`message ${id}: no payload schema`);
  }

  const operations = isNode(doc['operations']) ? doc['operations'] : {};
  for (const [id, o] of Object.entries(operations)) {
    if (!isNode(o)) {
      problems.push(`operation ${id} is not an object`);
      continue;
    }
    if (o['action'] !== 'send' && o['action'] !== 'receive') problems.push(`operation ${id}: action must be send or receive`);
    const belongs = (what: string, channelRef: string | undefined, list: unknown) => {
      const channelId = channelRef?.startsWith('#/channels/') ? channelRef.slice('#/channels/'.length) : undefined;
      if (channelId === undefined || !isNode(channels[channelId])) {
        problems.push(`operation ${id}: ${what} channel ${String(channelRef)} does not exist`);
        return;
      }
      for (const m of Array.isArray(list) ? list : []) {
        const r = refOf(m);
        if (r === undefined || !r.startsWith(`#/channels/${channelId}/messages/`)) problems.push(`operation ${id}: ${what} message ${String(r)} is not one of channel ${channelId}'s`);
      }
    };
    belongs('its', refOf(o['channel']), o['messages']);
    const reply = o['reply'];
    if (reply !== undefined) {
      if (!isNode(reply)) problems.push(`operation ${id}: reply is not an object`);
      else belongs('the reply', refOf(reply['channel']), reply['messages']);
    }
  }
  return problems;
}

/**
 * What differs between the checked-in document and the generated one, named
 * by where (`channels.work`, `components.schemas.podUpdate`, `info.version`):
 * each entry of the top-level sections, and of `components`' sections, that
 * is only in one of them or is not the same. Empty: they say the same.
 */
export function contractDifferences(checkedIn: unknown, generated: unknown): string[] {
  const out: string[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
  const compare = (a: unknown, b: unknown, path: string, depth: number) => {
    if (depth === 0 || !isNode(a) || !isNode(b)) {
      if (!same(a, b)) out.push(`${path}: differs`);
      return;
    }
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const where = path ? `${path}.${k}` : k;
      if (!(k in b)) out.push(`${where}: only in the checked-in file`);
      else if (!(k in a)) out.push(`${where}: only in the generated document`);
      else compare(a[k], b[k], where, k === 'components' ? depth + 1 : depth - 1);
    }
  };
  compare(checkedIn, generated, '', 2);
  return out;
}

function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (!isNode(v)) return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])]));
}
