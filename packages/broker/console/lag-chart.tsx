/** A lag-over-time chart (uPlot): one series per partition plus the total, fed by the group page's polls. */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface LagSample {
  /** Seconds since the epoch. */
  t: number;
  total: number;
  byPartition: Record<string, number>;
}

const COLORS = ['#2563eb', '#16a34a', '#d97706', '#9333ea', '#dc2626', '#0891b2', '#4d7c0f', '#be185d'];

export function LagChart({ samples, keys }: { samples: LagSample[]; keys: string[] }) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = keys.join('|');

  useEffect(() => {
    if (!host.current) return;
    const opts: uPlot.Options = {
      width: Math.max(320, host.current.clientWidth || 640),
      height: 220,
      scales: { x: { time: true } },
      axes: [{}, { label: 'lag (records)' }],
      series: [{}, { label: 'total', stroke: '#111827', width: 2 }, ...keys.map((k, i) => ({ label: k, stroke: COLORS[i % COLORS.length] }))],
    };
    plot.current = new uPlot(opts, [[], [], ...keys.map(() => [])], host.current);
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
    // rebuilt only when the set of partitions changes
  }, [shape]);

  useEffect(() => {
    if (!plot.current) return;
    const data: uPlot.AlignedData = [samples.map((s) => s.t), samples.map((s) => s.total), ...keys.map((k) => samples.map((s) => s.byPartition[k] ?? null))];
    plot.current.setData(data);
  }, [samples, shape]);

  return <div class="chart" ref={host} data-samples={samples.length} data-last-total={samples.length ? samples[samples.length - 1]!.total : ''} />;
}
