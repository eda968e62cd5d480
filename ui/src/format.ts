// Numbers as an operator reads them: thousands separated, amounts in the unit of their resource
// class (MEMORY_MB in GiB/TiB, DISK_GB in GB/TB), ages in seconds/minutes/hours.

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const oneDecimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

export function count(n: number | bigint): string {
  return integer.format(n);
}

/** A count that may pass 2^53 (identifier pools give those as decimal text): separated, or as a power of two. */
export function bigCount(c: number | string): string {
  const n = BigInt(c);
  if (n < 10n ** 15n) return integer.format(n);
  const bits = n.toString(2).length - 1;
  return n === 1n << BigInt(bits) ? `2^${bits}` : `≈2^${bits}`;
}

export function percent(fraction: number): string {
  if (!Number.isFinite(fraction)) return '–';
  const p = fraction * 100;
  if (p > 0 && p < 0.1) return '<0.1%';
  return `${p >= 10 ? integer.format(p) : oneDecimal.format(p)}%`;
}

const CLASS_LABELS: Record<string, string> = {
  VCPU: 'vCPU',
  PCPU: 'pCPU',
  MEMORY_MB: 'Memory',
  DISK_GB: 'Disk',
  SRIOV_NET_VF: 'SR-IOV VFs',
  NUMA_SOCKET: 'NUMA sockets',
  NUMA_CORE: 'NUMA cores',
  NUMA_THREAD: 'NUMA threads',
  NUMA_MEMORY_MB: 'NUMA memory',
  IPV4_ADDRESS: 'IPv4 addresses',
  VGPU: 'vGPU',
  PGPU: 'pGPU',
  NET_BW_EGR_KILOBIT_PER_SEC: 'Egress bandwidth',
  NET_BW_IGR_KILOBIT_PER_SEC: 'Ingress bandwidth',
};

/** A readable name for a resource class (the class itself for custom ones). */
export function classLabel(rc: string): string {
  return CLASS_LABELS[rc] ?? rc;
}

/** An amount of a resource class with its unit: `12 vCPU`, `64 GiB`, `1.5 TB`, `8`. */
export function amount(rc: string, n: number): string {
  switch (rc) {
    case 'VCPU':
    case 'PCPU':
      return `${count(n)} ${rc === 'VCPU' ? 'vCPU' : 'pCPU'}`;
    case 'MEMORY_MB':
    case 'NUMA_MEMORY_MB':
      return binary(n, ['MiB', 'GiB', 'TiB', 'PiB']);
    case 'DISK_GB':
      return decimal(n, ['GB', 'TB', 'PB']);
    case 'NET_BW_EGR_KILOBIT_PER_SEC':
    case 'NET_BW_IGR_KILOBIT_PER_SEC':
      return decimal(n, ['kbit/s', 'Mbit/s', 'Gbit/s', 'Tbit/s']);
    default:
      return count(n);
  }
}

function binary(n: number, units: string[]): string {
  let i = 0;
  while (Math.abs(n) >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? count(n) : oneDecimal.format(n)} ${units[i]}`;
}

function decimal(n: number, units: string[]): string {
  let i = 0;
  while (Math.abs(n) >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return `${i === 0 ? count(n) : oneDecimal.format(n)} ${units[i]}`;
}

/** `4 s`, `3 min`, `2 h 5 min`, `3 d` */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  return `${Math.floor(h / 24)} d`;
}

/** A uuid cut to its first group, for tables (the whole one is in the title). */
export function shortId(uuid: string): string {
  return uuid.length > 13 ? uuid.slice(0, 8) : uuid;
}

/** A server time as the operator's local date and time. */
export function timestamp(iso: string | null | undefined): string {
  if (!iso) return '–';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium' });
}
