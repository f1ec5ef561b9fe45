// Where a spec's `task:` lives in the medbench install. A bare name is a folder of tasks/; a path with `/`
// is any task folder of the install (its sources compiled by `npm run build` into dist/ beside the others),
// such as the runner tests' fixture tests/fixtures/sums/task. The runner knows no task by name either way.

/** A bare name (`voice-command`), or an install-relative folder path of such names (`tests/fixtures/x`). */
export const TASK_PATTERN = /^([a-z0-9][a-z0-9_-]*\/)*[a-z0-9][a-z0-9-]*$/;

/** The task's source folder, install-relative: `tasks/<name>`, or the path itself. Its compiled code is
 *  under `dist/` + this folder. */
export function taskFolder(task: string): string {
  return task.includes("/") ? task : `tasks/${task}`;
}
