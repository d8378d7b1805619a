/**
 * A pod's metadata, as the API server validates it: ValidateObjectMeta
 * (k8s.io/apimachinery/pkg/api/validation/objectmeta.go) with
 * ValidatePodName, and ValidateLabels (metav1 validation), which the pod
 * spec's nodeSelector goes through too.
 */
import { isRecord } from '@app/contracts';
import { invalid, required, type FieldError } from './field.js';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from './names.js';

const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

export function validateMetadata(meta: unknown, path: string, errs: FieldError[]): void {
  if (!isRecord(meta)) {
    errs.push(required(path, ''));
    return;
  }
  const name = meta['name'];
  if (name === undefined || name === null || name === '') errs.push(required(`${path}.name`, 'name or generateName is required'));
  else if (typeof name !== 'string') errs.push(invalid(`${path}.name`, name, 'must be a string'));
  else for (const m of isDNS1123Subdomain(name)) errs.push(invalid(`${path}.name`, name, m));

  const namespace = meta['namespace'];
  if (namespace !== undefined && namespace !== null && namespace !== '') {
    if (typeof namespace !== 'string') errs.push(invalid(`${path}.namespace`, namespace, 'must be a string'));
    else for (const m of isDNS1123Label(namespace)) errs.push(invalid(`${path}.namespace`, namespace, m));
  }
  validateLabels(meta['labels'], `${path}.labels`, errs);

  const annotations = meta['annotations'];
  if (annotations !== undefined && annotations !== null) {
    if (!isRecord(annotations)) errs.push(invalid(`${path}.annotations`, annotations, 'must be a map of string keys to string values'));
    else {
      let size = 0;
      for (const [k, v] of Object.entries(annotations)) {
        for (const m of isQualifiedName(k.toLowerCase())) errs.push(invalid(`${path}.annotations`, k, m));
        if (typeof v !== 'string') errs.push(invalid(`${path}.annotations[${k}]`, v, 'must be a string'));
        else size += k.length + v.length;
      }
      if (size > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push({ field: `${path}.annotations`, message: `Too long: may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes` });
    }
  }
}

/** ValidateLabels: qualified-name keys and label values (also for nodeSelector). */
export function validateLabels(labels: unknown, path: string, errs: FieldError[]): void {
  if (labels === undefined || labels === null) return;
  if (!isRecord(labels)) {
    errs.push(invalid(path, labels, 'must be a map of string keys to string values'));
    return;
  }
  for (const [k, v] of Object.entries(labels)) {
    for (const m of isQualifiedName(k)) errs.push(invalid(path, k, m));
    if (typeof v !== 'string') errs.push(invalid(`${path}[${k}]`, v, 'must be a string'));
    else for (const m of isValidLabelValue(v)) errs.push(invalid(path, v, m));
  }
}
