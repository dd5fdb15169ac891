import { provideRuntimeActors } from '../calls/provide.ts';
import type { CallDirectory } from '../calls/directory.ts';
import type { AnyMachineDefinition } from '../definition.ts';
import { FlowingError } from '../errors.ts';
import type { AnyTool } from '../tool.ts';
import type { ThrowRecorder } from './instrument.ts';
import { analyzeMachine, type MachineInfo } from './machine-info.ts';

/** The machines one runtime runs, with the runtime's call actors provided, by id. */
export class MachineRegistry {
  readonly byId = new Map<string, MachineInfo>();
  private readonly throws = new WeakMap<MachineInfo, ThrowRecorder>();

  constructor(given: readonly AnyMachineDefinition[], directory: CallDirectory, overrides: Readonly<Record<string, AnyTool>> = {}) {
    for (const machine of given) {
      const tools = { ...machine.tools };
      for (const name of Object.keys(tools)) if (overrides[name]) tools[name] = overrides[name];
      const definition = { ...machine, tools };
      let recorder: ThrowRecorder | undefined;
      const info: MachineInfo = analyzeMachine(definition, (xstateMachine) => {
        const instrumented = provideRuntimeActors(definition, xstateMachine, () => info, directory);
        recorder = instrumented.throws;
        return instrumented.machine;
      });
      this.throws.set(info, recorder!);
      this.byId.set(definition.id, info);
    }
  }

  /** The machine with this id; UNKNOWN_MACHINE names the known ones. */
  get(machineId: string): MachineInfo {
    const info = this.byId.get(machineId);
    if (!info)
      throw new FlowingError(
        'UNKNOWN_MACHINE',
        `no machine '${machineId}' was given to the runtime (known: ${[...this.byId.keys()].join(', ')})`,
      );
    return info;
  }

  throwsOf(info: MachineInfo): ThrowRecorder {
    return this.throws.get(info)!;
  }
}
