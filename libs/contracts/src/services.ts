/**
 * The services of DESIGN.md, by name: the name is each one's NATS user,
 * inbox prefix and `{service}` subject token, so it lives beside the subjects.
 * The order is the one-process mode's start order (cri-gateway drains last).
 * kubelet-server, node-status and console run beside status-manager in one
 * process by default (STATUS_GROUP); each is still its own module and user.
 */
export const SERVICE_NAMES = ['config-source', 'sync-loop', 'pod-worker', 'pleg', 'prober', 'status-manager', 'kubelet-server', 'node-status', 'console', 'cri-gateway'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/**
 * The services the launcher, compose and the tests' harness run in one
 * process by default (the one-process machinery, TARGET=<this list>): the
 * parts of upstream's kubelet that status-manager once held, grouped again
 * so the node's footprint does not grow (docs/adr/0023-status-group.md).
 */
export const STATUS_GROUP = ['status-manager', 'kubelet-server', 'node-status', 'console'] as const satisfies readonly ServiceName[];
