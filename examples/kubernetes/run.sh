#!/bin/sh
# Runs the Kubernetes example (docs/remote-cache.md, "Kubernetes"), from the top of the project, once its
# image is pushed and the Secrets medbench-remote and medbench-provider exist: the route file and the results
# volume, the shards Job, then the assembly Job once every share is complete. A shards Job that fails (a
# share out of tries) stops it at once, exit 1, without assembling. Needs kubectl, set to the cluster and
# namespace. A run replaces the Jobs of an earlier one (the replies stay in the bucket).
set -eu
here=$(dirname "$0")
kubectl delete job medbench-shards medbench-assemble --ignore-not-found
kubectl apply -f "$here/routes-configmap.yaml" -f "$here/results-volume.yaml"
kubectl apply -f "$here/shards-job.yaml"

# Until the Job is Complete, or Failed: whichever it reaches first, never a fixed long wait.
finished() {
  while :; do
    conditions=$(kubectl get job "$1" -o 'jsonpath={.status.conditions[?(@.status=="True")].type}')
    case " $conditions " in
      *" Complete "*) return 0 ;;
      *" Failed "*)
        echo "job $1 failed: see kubectl describe job $1, and kubectl logs -l job-name=$1" >&2
        return 1
        ;;
    esac
    sleep "${MEDBENCH_POLL_S:-10}"
  done
}

finished medbench-shards
kubectl apply -f "$here/assemble-job.yaml"
finished medbench-assemble
echo "done: the results, medbench.lock and report.html are on the volume claim medbench-results"
