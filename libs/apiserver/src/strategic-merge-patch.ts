/**
 * apimachinery's strategicpatch.CreateTwoWayMergePatch for JSON objects:
 * the patch that turns `original` into `modified` when the apiserver applies
 * it as `application/strategic-merge-patch+json`.
 *
 *  - a field only in `modified`, or whose value changed: the new value
 *    (objects are diffed field by field);
 *  - a field only in `original`: `null` (delete);
 *  - a list the type merges by a key (patchStrategy merge, patchMergeKey,
 *    given in `mergeKeys` by its dotted path, e.g. `status.conditions` by
 *    `type`): the items added whole, the items changed as their diff with
 *    the key, the items removed as `{key, $patch: delete}`, and
 *    `$setElementOrder/<list>` with the keys in the new order whenever the
 *    list changed; an empty original list is replaced whole;
 *  - any other list is atomic: replaced whole when it differs.
 *
 * `null` and `undefined` count as absent (Go's omitted fields); callers
 * that compare with the apiserver's JSON canonicalize their own first.
 * Field order and retainKeys directives are not produced (no type here
 * uses retainKeys on a field the kubelet writes).
 */

/** The merge key of each list that merges by key, by its dotted path from the object's root (lists inside list items continue the list's path). */
export type MergeKeys = Readonly<Record<string, string>>;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

/** The merge keys of core/v1 PodStatus (k8s.io/api core/v1 types.go patchMergeKey tags). */
export const POD_STATUS_MERGE_KEYS: MergeKeys = {
  'status.conditions': 'type',
  'status.podIPs': 'ip',
  'status.hostIPs': 'ip',
  'status.resourceClaimStatuses': 'name',
};

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const present = (v: unknown): boolean => v !== null && v !== undefined;

export function createTwoWayMergePatch(original: object, modified: object, mergeKeys: MergeKeys = {}): Record<string, unknown> {
  return diffMaps(original as JsonObject, modified as JsonObject, '', mergeKeys);
}

function diffMaps(original: JsonObject, modified: JsonObject, path: string, mergeKeys: MergeKeys): JsonObject {
  const patch: JsonObject = {};
  for (const [key, mv] of Object.entries(modified)) {
    if (!present(mv)) continue;
    const ov = original[key];
    const field = path ? `${path}.${key}` : key;
    if (!present(ov)) {
      patch[key] = mv;
    } else if (isObject(ov) && isObject(mv)) {
      const sub = diffMaps(ov, mv, field, mergeKeys);
      if (Object.keys(sub).length > 0) patch[key] = sub;
    } else if (Array.isArray(ov) && Array.isArray(mv)) {
      const mergeKey = mergeKeys[field];
      if (mergeKey !== undefined && ov.length > 0 && ov.every(isObject) && mv.every(isObject)) diffMergeList(key, ov, mv, field, mergeKey, mergeKeys, patch);
      else if (!deepEqual(ov, mv)) patch[key] = mv;
    } else if (!deepEqual(ov, mv)) {
      patch[key] = mv;
    }
  }
  for (const [key, ov] of Object.entries(original)) {
    if (present(ov) && !present(modified[key])) patch[key] = null;
  }
  return patch;
}

/** diffListsOfMaps and the $setElementOrder list (diffLists with SetElementOrder). */
function diffMergeList(key: string, original: JsonObject[], modified: JsonObject[], path: string, mergeKey: string, mergeKeys: MergeKeys, patch: JsonObject): void {
  const id = (o: JsonObject) => JSON.stringify(o[mergeKey] ?? null);
  const before = new Map(original.map((o) => [id(o), o]));
  const after = new Set(modified.map(id));
  const items: Json[] = [];
  for (const m of modified) {
    const o = before.get(id(m));
    if (!o) {
      items.push(m);
      continue;
    }
    const sub = diffMaps(o, m, path, mergeKeys);
    if (Object.keys(sub).length > 0) items.push({ ...sub, [mergeKey]: m[mergeKey] ?? null });
  }
  for (const o of original) if (!after.has(id(o))) items.push({ [mergeKey]: o[mergeKey] ?? null, $patch: 'delete' });
  const orderSame = original.length === modified.length && original.every((o, i) => id(o) === id(modified[i] ?? {}));
  if (items.length > 0) patch[key] = items;
  if (items.length > 0 || !orderSame) patch[`$setElementOrder/${key}`] = modified.map((m) => ({ [mergeKey]: m[mergeKey] ?? null }));
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)].filter((k) => present(a[k]) || present(b[k])));
    for (const k of keys) if (!deepEqual(a[k], b[k])) return false;
    return true;
  }
  return false;
}

/**
 * The apiserver's side, for test doubles: `patch` (as createTwoWayMergePatch
 * makes it) applied to `original`. Handles what that function produces:
 * null deletes a field, objects merge, lists merge by their key (items
 * replaced by key and merged, `$patch: delete` items removed, then ordered by
 * `$setElementOrder/<list>`), other lists are replaced.
 */
export function applyStrategicMergePatch<T extends object>(original: T, patch: object, mergeKeys: MergeKeys = {}): T {
  return applyMap(structuredClone(original) as JsonObject, patch as JsonObject, '', mergeKeys) as T;
}

function applyMap(target: JsonObject, patch: JsonObject, path: string, mergeKeys: MergeKeys): JsonObject {
  for (const [key, pv] of Object.entries(patch)) {
    if (key.startsWith('$')) continue;
    const field = path ? `${path}.${key}` : key;
    const tv = target[key];
    const mergeKey = mergeKeys[field];
    if (pv === null) delete target[key];
    else if (isObject(pv) && isObject(tv)) target[key] = applyMap(tv, pv, field, mergeKeys);
    else if (Array.isArray(pv) && mergeKey !== undefined) target[key] = applyMergeList(Array.isArray(tv) ? tv : [], pv, patch[`$setElementOrder/${key}`], field, mergeKey, mergeKeys);
    else target[key] = structuredClone(pv);
  }
  for (const [key, order] of Object.entries(patch)) {
    const list = key.startsWith('$setElementOrder/') ? key.slice('$setElementOrder/'.length) : undefined;
    if (list === undefined || Array.isArray(patch[list])) continue;
    const mergeKey = mergeKeys[path ? `${path}.${list}` : list];
    const items = target[list];
    if (mergeKey !== undefined && Array.isArray(items) && Array.isArray(order)) target[list] = ordered(items as JsonObject[], order, mergeKey);
  }
  return target;
}

function applyMergeList(items: Json[], patch: Json[], order: Json | undefined, path: string, mergeKey: string, mergeKeys: MergeKeys): Json[] {
  const id = (o: Json) => JSON.stringify((isObject(o) ? o[mergeKey] : undefined) ?? null);
  let out = items.map((i) => structuredClone(i));
  for (const p of patch) {
    if (!isObject(p)) continue;
    const i = out.findIndex((o) => id(o) === id(p));
    if (p['$patch'] === 'delete') {
      if (i >= 0) out = out.filter((_, j) => j !== i);
      continue;
    }
    const existing = out[i];
    if (i >= 0 && isObject(existing)) out[i] = applyMap(existing, p, path, mergeKeys);
    else out.push(structuredClone(p));
  }
  return Array.isArray(order) ? ordered(out as JsonObject[], order, mergeKey) : out;
}

/** The items named in `order` first, in its order; the others after, as they were. */
function ordered(items: JsonObject[], order: Json[], mergeKey: string): JsonObject[] {
  const key = (o: Json) => JSON.stringify((isObject(o) ? o[mergeKey] : undefined) ?? null);
  const rank = new Map(order.map((o, i) => [key(o), i]));
  return [...items].sort((a, b) => (rank.get(key(a)) ?? order.length) - (rank.get(key(b)) ?? order.length));
}
