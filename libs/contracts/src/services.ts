/**
 * The seven services of DESIGN.md, by name: the name is each one's NATS user,
 * inbox prefix and `{service}` subject token, so it lives beside the subjects.
 */
export const SERVICE_NAMES = ['config-source', 'sync-loop', 'pod-worker', 'pleg', 'prober', 'status-manager', 'cri-gateway'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];
