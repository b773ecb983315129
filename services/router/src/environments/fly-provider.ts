import type { Logger } from 'pino';
import type { FlySettings } from '../config.ts';
import { FlyApi, FlyApiError, type FlyMachine } from './fly-api.ts';
import type { EnvironmentProvider, EnvironmentState, EnvironmentUser, ProvisionedEnvironment } from './provider.ts';

/** Fly names: a machine per user, and a volume (lowercase letters, digits and _, at most 30). */
const machineName = (userId: string) => `daemon-${userId}`;
const volumeName = (userId: string) => `data_${userId.replaceAll('-', '').slice(0, 24)}`;
const startWaitSeconds = 60;

function addressOf(machine: FlyMachine, port: number): string {
  // Fly's private network is IPv6; a bracketed host is what a URL wants.
  const host = machine.private_ip.includes(':') ? `[${machine.private_ip}]` : machine.private_ip;
  return `http://${host}:${port}`;
}

/**
 * Fly Machines: one app, a machine and a volume per user. Provisioning creates the volume, then the machine with the
 * volume mounted at /data and the daemon's settings (stopped: it starts on the first request); start asks Fly to start
 * it and waits for `started`; stop and destroy are Fly's. The machine's private address is read at each start (a
 * machine can move hosts); this is how the platform grows past one machine.
 */
export class FlyProvider implements EnvironmentProvider {
  readonly name = 'fly';
  readonly #api: FlyApi;
  readonly #settings: FlySettings;
  readonly #secretsFor: (userId: string) => Record<string, string>;
  readonly #daemonPort: number;
  readonly #logger: Logger;
  readonly #running = new Map<string, string>();

  constructor(settings: FlySettings, options: { secretsFor: (userId: string) => Record<string, string>; daemonPort: number; logger: Logger }) {
    this.#api = new FlyApi(settings.apiUrl, settings.apiToken, settings.appName);
    this.#settings = settings;
    this.#secretsFor = options.secretsFor;
    this.#daemonPort = options.daemonPort;
    this.#logger = options.logger;
  }

  async ensure(user: EnvironmentUser): Promise<ProvisionedEnvironment> {
    // Idempotent across a router that stopped half way: an existing volume or machine of the user is reused.
    const volume =
      (await this.#api.listVolumes()).find((candidate) => candidate.name === volumeName(user.id)) ??
      (await this.#api.createVolume({ name: volumeName(user.id), region: user.region, size_gb: this.#settings.volumeSizeGb }));
    const machine =
      (await this.#api.listMachines()).find((candidate) => candidate.name === machineName(user.id)) ??
      (await this.#api.createMachine({
        name: machineName(user.id),
        region: user.region,
        skip_launch: true,
        config: {
          image: this.#settings.image,
          env: {
            ...this.#settings.daemonEnv,
            DAEMON_USER_ID: user.id,
            ...this.#secretsFor(user.id),
            DATA_DIR: '/data',
            HOST: '::',
            PORT: String(this.#daemonPort),
          },
          mounts: [{ volume: volume.id, path: '/data' }],
          restart: { policy: 'no' },
          auto_destroy: false,
        },
      }));
    this.#logger.info({ user: user.id, machine: machine.id, volume: volume.id }, 'fly machine ensured');
    return { environmentId: machine.id, address: null, volume: volume.id };
  }

  async start(user: EnvironmentUser): Promise<void> {
    const id = this.#machineId(user);
    let machine = await this.#api.getMachine(id);
    if (machine.state !== 'started') {
      await this.#api.startMachine(id);
      await this.#api.waitFor(id, 'started', startWaitSeconds);
      machine = await this.#api.getMachine(id);
    }
    this.#running.set(user.id, addressOf(machine, this.#daemonPort));
  }

  async stop(user: EnvironmentUser): Promise<void> {
    if (user.environmentId === null) return;
    this.#running.delete(user.id);
    await this.#api.stopMachine(user.environmentId).catch((error) => {
      if (!(error instanceof FlyApiError && error.status === 404)) throw error;
    });
  }

  async destroy(user: EnvironmentUser): Promise<void> {
    this.#running.delete(user.id);
    const ignoreMissing = (error: unknown) => {
      if (!(error instanceof FlyApiError && error.status === 404)) throw error;
    };
    if (user.environmentId !== null) await this.#api.destroyMachine(user.environmentId).catch(ignoreMissing);
    if (user.volume !== null) await this.#api.deleteVolume(user.volume).catch(ignoreMissing);
  }

  async address(user: EnvironmentUser): Promise<string | undefined> {
    return this.#running.get(user.id);
  }

  async state(user: EnvironmentUser): Promise<EnvironmentState> {
    if (user.environmentId === null) return 'absent';
    try {
      const machine = await this.#api.getMachine(user.environmentId);
      return machine.state === 'started' ? 'running' : machine.state === 'starting' ? 'starting' : 'stopped';
    } catch (error) {
      if (error instanceof FlyApiError && error.status === 404) return 'absent';
      throw error;
    }
  }

  running(): string[] {
    return [...this.#running.keys()];
  }

  async close(): Promise<void> {
    // Machines are Fly's to keep; a restarted router finds them by name and reads their state.
  }

  #machineId(user: EnvironmentUser): string {
    if (user.environmentId === null) throw new Error(`user ${user.id} has no Fly machine yet`);
    return user.environmentId;
  }
}
