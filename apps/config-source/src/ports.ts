/**
 * What the config source's logic depends on: reading a manifest directory
 * (and noticing it change), fetching a manifest URL, the node's pods in the
 * apiserver, the objects its pods reference (watched one by one), and
 * where the PodUpdate operations and metrics go. Events go through @app/contracts'
 * EventRecorder. The adapters are in adapters/.
 */
import type { ApiObjectKind, Pod, PodOperation, PodUpdateMessage, Service, SourcesReadyMessage } from '@app/contracts';
import type { ManifestInput } from './listing.js';

export type DirectoryRead = { missing: true; error: string } | { missing: false; manifests: ManifestInput[] };

export abstract class ManifestDirectory {
  /** Every manifest in the directory (dotfiles and subdirectories ignored). */
  abstract read(dir: string): Promise<DirectoryRead>;
  /** Calls `onChange` when something in the directory changes; returns a stop function. */
  abstract watch(dir: string, onChange: () => void, onError: (err: Error) => void): () => void;
}

export type FetchResult = { ok: true; text: string } | { ok: false; error: string };

export abstract class ManifestFetcher {
  abstract fetch(url: string, headers: Record<string, string>, timeoutMs: number): Promise<FetchResult>;
}

/**
 * The pods bound to this node in the apiserver (`spec.nodeName=<node>`), as
 * client-go's Reflector keeps them in an UndeltaStore: `onListing` gets the
 * whole current set (wire JSON) after the first successful list and after
 * every change; while the apiserver cannot be reached it is not called, so
 * the last set stands. Returns a stop function.
 */
export abstract class ApiserverPods {
  abstract watch(nodeName: string, onListing: (pods: Pod[]) => void): () => void;
}

/** configCh: `kubelet.<node>.config.<op>` and `kubelet.<node>.config.ready`. */
export abstract class PodUpdateOutbox {
  abstract podUpdate(msg: PodUpdateMessage): void;
  abstract sourcesReady(msg: SourcesReadyMessage): void;
}

/** What the config source reports to metrics. */
export abstract class ConfigMetrics {
  abstract problems(source: string, count: number): void;
  abstract operations(source: string, op: PodOperation, count: number): void;
}

/** An apiserver object a pod references (ConfigMap, Secret, RuntimeClass); `namespace` is '' for a cluster-scoped kind. */
export interface ApiObjectRef {
  kind: ApiObjectKind;
  namespace: string;
  name: string;
}

/** An object as the apiserver gives it (wire JSON): the fields the pods' consumers read. */
export interface ApiObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  type?: string;
  handler?: string;
  /** A configMap or secret that can never change (its watch is stopped once it is seen, as upstream). */
  immutable?: boolean;
}

/**
 * One object, watched (client-go's Reflector over the object's collection
 * with `fieldSelector=metadata.name=<name>`, as upstream's watch-based
 * manager does): `onListing` gets the current list (empty: the object does
 * not exist) after the first successful list and each change; `onError`
 * each failed list or watch (the watch keeps trying). Returns a stop function.
 */
export abstract class ApiObjectWatch {
  abstract watch(ref: ApiObjectRef, onListing: (items: ApiObject[]) => void, onError: (err: Error) => void): () => void;
}

/**
 * Every Service of the cluster, watched (upstream's serviceLister: a
 * Reflector over `/api/v1/services`): `onListing` gets the whole current
 * list after the first successful list and each change; `onError` each
 * failed list or watch (the watch keeps trying). Returns a stop function.
 */
export abstract class ApiServiceWatch {
  abstract watch(onListing: (services: Service[]) => void, onError: (err: Error) => void): () => void;
}

/** A TokenRequest's spec, bound to a pod (authentication/v1 TokenRequestSpec). */
export interface TokenRequestSpec {
  audiences?: string[];
  expirationSeconds: number;
  boundObjectRef: { apiVersion: 'v1'; kind: 'Pod'; name: string; uid: string };
}

/** What the apiserver minted: the token and when it expires (ms since the epoch). */
export interface IssuedToken {
  token: string;
  expiresAt: number;
}

/**
 * The TokenRequest API (`POST .../serviceaccounts/<name>/token`): a token of
 * a service account bound to a pod; the Node authorizer allows a node this
 * for the service accounts of its own pods. Rejects with what the apiserver said.
 */
export abstract class TokenRequester {
  abstract request(namespace: string, serviceAccountName: string, spec: TokenRequestSpec): Promise<IssuedToken>;
}

/**
 * The pods the sync loop already holds (its `pods` bucket, read only): the
 * creationTimestamp each was given when first seen, by UID, so a restarted
 * config source stamps a pod it sees again with the same time.
 */
export abstract class KnownPods {
  abstract creationTimestamps(): Promise<Map<string, string>>;
}
