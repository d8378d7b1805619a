# Sourced by deploy/images/build.sh and deploy/conformance/images.sh: one
# function, docker_archive, that writes an image as a docker-archive (the
# `docker save` format) by hand, one layer, with no registry and no engine.
#
# docker_archive NAME ROOTFS CONFIG_JSON_FRAGMENT OUTPUT CREATED_BY
#   NAME      the image's name (RepoTags)
#   ROOTFS    the directory that becomes its one layer
#   CONFIG_JSON_FRAGMENT  the image config's `config` (Entrypoint, Cmd, User, Env, ...)
#   OUTPUT    the archive to write
#   CREATED_BY  its history's created_by (part of the config, hence of the image's digest)
#   XATTRS    optional: "caps" to keep the files' security.capability (file
#             capabilities, e.g. set with setcap) in the layer; without it the
#             layer holds no extended attributes
# Uses $work, a scratch directory the caller made. Reproducible: the same
# inputs give the same digests (sorted entries, mtime 0, owner 0).
docker_archive() {
  local name=$1 rootfs=$2 fragment=$3 output=$4 created_by=$5 xattrs=()
  # (pax headers then, without the atime and ctime that would make the layer differ each time)
  [ "${6:-}" = caps ] && xattrs=(--xattrs --xattrs-include=security.capability
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime)
  local dir; dir="$work/archive-$(basename "$output" .tar)"
  rm -rf "$dir"; mkdir -p "$dir"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner "${xattrs[@]}" -C "$rootfs" -cf "$dir/layer.tar" .
  local diff_id; diff_id=$(sha256sum "$dir/layer.tar" | cut -d' ' -f1)
  mkdir -p "$dir/$diff_id"; mv "$dir/layer.tar" "$dir/$diff_id/layer.tar"
  printf '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"%s"}]}' \
    "$fragment" "$diff_id" "$created_by" > "$dir/config.json"
  local config_id; config_id=$(sha256sum "$dir/config.json" | cut -d' ' -f1)
  mv "$dir/config.json" "$dir/$config_id.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$config_id" "$name" "$diff_id" > "$dir/manifest.json"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$dir" -cf "$output" .
  echo "built $name -> $output ($(du -h "$dir/$diff_id/layer.tar" | cut -f1) layer, config sha256:$config_id)" >&2
}
