# bash completion for shmwatch (installed as
# /usr/share/bash-completion/completions/shmwatch). The option lists are
# those of src/cli (tests/integration/completions.sh checks that they match).

_shmwatch_themes()
{
    local d f names=
    for d in "${XDG_CONFIG_HOME:-$HOME/.config}/shmwatch/themes" /usr/local/share/shmwatch/themes \
        /usr/share/shmwatch/themes; do
        for f in "$d"/*.yaml; do
            [ -e "$f" ] || continue
            f=${f##*/}
            names+=" ${f%.yaml}"
        done
    done
    printf '%s\n' $names
}

_shmwatch()
{
    local cur prev words cword
    if declare -F _init_completion >/dev/null 2>&1; then
        _init_completion || return
    else
        COMPREPLY=()
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    fi

    local cmd= i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
        clean | reap | plan | record | replay | why)
            cmd=${words[i]}
            break
            ;;
        esac
    done

    case $prev in
    --config | --log | --prometheus-file)
        COMPREPLY=($(compgen -f -- "$cur"))
        return
        ;;
    --mount | --dir)
        COMPREPLY=($(compgen -d -- "$cur"))
        return
        ;;
    --record) # its directory may be left out: an option typed next is completed as one
        if [[ $cur != -* ]]; then
            COMPREPLY=($(compgen -d -- "$cur"))
            return
        fi
        ;;
    --theme)
        COMPREPLY=($(compgen -W "$(_shmwatch_themes)" -- "$cur") $(compgen -f -- "$cur"))
        return
        ;;
    --pid | --observe)
        COMPREPLY=($(compgen -W "$(cd /proc 2>/dev/null && printf '%s\n' [0-9]*)" -- "$cur"))
        return
        ;;
    -d | --dtype)
        [ "$cmd" = plan ] || return
        COMPREPLY=($(compgen -W "float32 float64 float16 bfloat16 uint8 int8 int16 int32 int64 bool" -- "$cur"))
        return
        ;;
    --at | --interval | --count | --min-age | --orphan-min-age | -t | --timeout | -b | --batch-size | -s | --sample-shape | \
        -w | --workers | -p | --prefetch-factor | -m | --memory | --shm-size | --max-size | --max-age | --since | --container)
        return
        ;;
    esac

    local opts
    case $cmd in
    clean) opts="--dry-run --yes --all-unheld --min-age --orphan-min-age --trust-pids --mount --log --config --pid --all --help -n -y -h" ;;
    reap) opts="--dry-run --yes --timeout --log --config --pid --all --help -n -y -t -h" ;;
    record) opts="--pid --all --dir --interval --max-size --max-age --config --help -h" ;;
    replay) opts="--dir --at --config --theme --no-color --ascii --help -h" ;;
    plan) opts="--batch-size --sample-shape --dtype --workers --prefetch-factor --memory --shm-size --json --observe --help -b -s -d -w -p -m -h" ;;
    why) opts="--dir --since --pid --container --json --help -h" ;;
    *)
        opts="--once --json --prometheus --prometheus-file --interval --count --mount --pid --all --orphan-min-age --trust-pids --config --theme --no-color --ascii --read-only --log --record --demo --version --help -h"
        if [[ $cur != -* ]]; then
            COMPREPLY=($(compgen -W "clean reap plan record replay why" -- "$cur"))
            return
        fi
        ;;
    esac
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -F _shmwatch shmwatch
