/**
 * Name and value syntax, as k8s.io/apimachinery/pkg/util/validation
 * (validation.go) checks it: DNS-1123 labels and subdomains, qualified names
 * (label and annotation keys), label values, IANA port names, port numbers,
 * HTTP header names. Each check returns the messages upstream gives, none
 * when the value is valid.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const PORT_NAME_CHARSET = /^[-a-z0-9]+$/;
export const HTTP_HEADER_NAME = /^[-A-Za-z0-9]+$/;

const DNS1123_LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

const maxLen = (n: number) => `must be no more than ${n} characters`;

/** IsDNS1123Label: at most 63 characters, lowercase alphanumerics and '-'. */
export function isDNS1123Label(value: string): string[] {
  const msgs: string[] = [];
  if (value.length > 63) msgs.push(maxLen(63));
  if (!DNS1123_LABEL.test(value)) msgs.push(DNS1123_LABEL_MESSAGE);
  return msgs;
}

/** IsDNS1123Subdomain: at most 253 characters, dot-separated DNS labels. */
export function isDNS1123Subdomain(value: string): string[] {
  const msgs: string[] = [];
  if (value.length > 253) msgs.push(maxLen(253));
  if (!DNS1123_SUBDOMAIN.test(value)) msgs.push(DNS1123_SUBDOMAIN_MESSAGE);
  return msgs;
}

/** IsValidPortName: an IANA_SVC_NAME (RFC 6335). */
export function isValidPortName(port: string): string[] {
  const msgs: string[] = [];
  if (port.length > 15) msgs.push(maxLen(15));
  if (!PORT_NAME_CHARSET.test(port)) msgs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) msgs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) msgs.push('must not contain consecutive hyphens');
  if (port.startsWith('-') || port.endsWith('-')) msgs.push('must not begin or end with a hyphen');
  return msgs;
}

/** IsValidPortNum */
export function isValidPortNum(port: number): string[] {
  return port >= 1 && port <= 65535 ? [] : ['must be between 1 and 65535, inclusive'];
}

/** IsQualifiedName: `[prefix/]name`, the form of label and annotation keys. */
export function isQualifiedName(value: string): string[] {
  const parts = value.split('/');
  let name: string;
  const msgs: string[] = [];
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix === '') msgs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) msgs.push(`prefix part ${m}`);
  } else {
    return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"];
  }
  if (name === '') msgs.push('name part must be non-empty');
  else if (name.length > 63) msgs.push(`name part ${maxLen(63)}`);
  if (name !== '' && !QUALIFIED_NAME_PART.test(name)) {
    msgs.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  }
  return msgs;
}

/** IsValidLabelValue */
export function isValidLabelValue(value: string): string[] {
  const msgs: string[] = [];
  if (value.length > 63) msgs.push(maxLen(63));
  if (!LABEL_VALUE.test(value)) {
    msgs.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  }
  return msgs;
}
