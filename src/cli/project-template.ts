// What `medbench init` writes into a benchmark author's repository (src/cli/commands/init.ts).

/** The lines .gitignore needs: what a build writes and can write again. */
export const GITIGNORE = [
  "# medbench: the local cache and built results; the installed packages",
  "cache/",
  "results/",
  "node_modules/",
];

/** A route registry whose routes are all commented out: nothing is sent until one is uncommented. */
export const ROUTES_TEMPLATE = `# Model routes for this project: a model is ROUTE/MODEL, e.g.
#   npx medbench build voice-command --model vllm/Qwen/Qwen3-8B --registry routes.yaml
# Uncomment the routes you use. api_key_env names the environment variable that holds the key; the key
# itself is never written anywhere. request.thinking_off: fields that switch thinking off on the route.
# Every field, and the routes medbench ships (medbench/* baselines, local, openrouter, openai):
# node_modules/medbench/registry/providers.yaml and docs/model-requests.md.
routes:
  # vllm:      # vllm serve MODEL --port 8000
  #   base_url: http://127.0.0.1:8000/v1
  #   concurrency: 8
  #   request:
  #     thinking_off: { chat_template_kwargs: { enable_thinking: false } }
  #     reasoning_low: { reasoning_effort: low }   # gpt-oss cannot switch reasoning off: its lowest effort
  #     reasoning_low_models: [gpt-oss]
  # sglang:    # python -m sglang.launch_server --model-path MODEL --port 30000
  #   base_url: http://127.0.0.1:30000/v1
  #   concurrency: 8
  #   request:
  #     thinking_off: { chat_template_kwargs: { enable_thinking: false } }
  #     reasoning_low: { reasoning_effort: low }   # gpt-oss cannot switch reasoning off: its lowest effort
  #     reasoning_low_models: [gpt-oss]
  # ollama:    # ollama serve (its OpenAI-compatible API)
  #   base_url: http://127.0.0.1:11434/v1
  #   concurrency: 2
  #   request:
  #     thinking_off: { reasoning_effort: none }
  #     reasoning_low: { reasoning_effort: low }   # Ollama ignores think false for gpt-oss
  #     reasoning_low_models: [gpt-oss]
  # The two below are the shipped routes as they are (a route here replaces the shipped one of its name).
  # openrouter:
  #   base_url: https://openrouter.ai/api/v1
  #   api_key_env: OPENROUTER_API_KEY
  #   concurrency: 16
  #   request:
  #     thinking_off: { reasoning: { effort: none } }
  #     reasoning_low: { reasoning: { effort: low } }
  #     reasoning_low_models: [gpt-oss]
  #     schema_mode: { provider: { require_parameters: true } }
  # openai:
  #   base_url: https://api.openai.com/v1
  #   api_key_env: OPENAI_API_KEY
  #   concurrency: 16
  #   request:
  #     thinking_off: {}
  #     reasoning_low: { reasoning_effort: low }
  #     reasoning_low_models: [gpt-oss]
  #     token_field: max_completion_tokens
  #     models:   # reasoning models: temperature and top_p only at 1 (docs/model-requests.md)
  #       "gpt-5-chat*": {}
  #       "gpt-5-pro*":
  #         fixed: { temperature: 1, top_p: 1 }
  #         no_thinking_off: it reasons at high effort only
  #       "gpt-5.*": { fixed: { temperature: 1, top_p: 1 }, thinking_off: { reasoning_effort: none } }
  #       "gpt-5*": { fixed: { temperature: 1, top_p: 1 }, reasoning_low: { reasoning_effort: minimal } }
  #       "o1*": { fixed: { temperature: 1, top_p: 1 }, reasoning_low: { reasoning_effort: low } }
  #       "o3*": { fixed: { temperature: 1, top_p: 1 }, reasoning_low: { reasoning_effort: low } }
  #       "o4*": { fixed: { temperature: 1, top_p: 1 }, reasoning_low: { reasoning_effort: low } }
`;

export const PROJECT_README = `# Benchmarks built with medbench

Reproducible builds of LLM benchmarks with [medbench](https://www.npmjs.com/package/medbench): every
stage (download, prompts, model, parse, score, bootstrap) is keyed by what it reads and runs, and rerun
only when that changes; every result records its spec's \`spec_hash\` and the exact requests sent.

    npx medbench build voice-command                  # a built-in task, offline on its synthetic sample
    npx medbench init --task voice-command            # its spec copied to specs/ to edit
    npx medbench new-task my-task                     # a task of your own: specs/my-task.yaml, tasks/my-task/
    npx medbench build specs/my-task.yaml             # offline, on its two-item sample
    npx medbench build specs/my-task.yaml --model vllm/MODEL --registry routes.yaml   # a real model
    npx medbench export results/SLUG/MODEL -o result.tar.gz && npx medbench verify result.tar.gz

- \`specs/<name>.yaml\`: a task's spec (the published part under \`spec:\`, and the stage graph).
- \`tasks/<name>/index.ts\`: a task's code (prompts, parser, scorer, baselines), compiled by medbench.
- \`routes.yaml\`: model routes (uncomment one); pass it with \`--registry routes.yaml\`.
- \`medbench.lock\`: commit it; it pins the release files and every stage's key.
- \`cache/\` and \`results/\`: written by builds (ignored by git).

\`npx medbench --help\` lists every command; \`npx medbench <command> --help\` its options.
`;
