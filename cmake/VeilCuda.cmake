# Is an NVIDIA GPU present? Used by CMakeLists.txt when VEIL_CUDA=AUTO (the default): the CUDA
# backend is compiled only when a GPU is present and nvcc is found, so that a machine with the
# CUDA toolkit but no GPU (a CI runner, a laptop) does not spend minutes in nvcc for a backend it
# cannot run.
#
# A GPU is present when `nvidia-smi -L` lists one, or when a device file (/dev/nvidia0; the list
# is VEIL_GPU_DEVICE_FILES) exists, as in a container given a GPU without nvidia-smi.
#
# Also a script: `cmake -P cmake/VeilCuda.cmake` prints "gpu: yes|no (reason)" and exits.

function(veil_gpu_present out_found out_reason)
  if(NOT DEFINED VEIL_GPU_DEVICE_FILES)
    set(VEIL_GPU_DEVICE_FILES /dev/nvidia0)
  endif()
  find_program(_veil_smi nvidia-smi NO_CACHE)
  if(_veil_smi)
    execute_process(COMMAND "${_veil_smi}" -L RESULT_VARIABLE rc OUTPUT_VARIABLE listed
                    ERROR_QUIET TIMEOUT 20)
    if(rc STREQUAL "0" AND listed MATCHES "GPU [0-9]+:")
      string(REGEX MATCH "GPU [0-9]+: [^\n(]*[^\n( ]" first "${listed}")
      set(${out_found} TRUE PARENT_SCOPE)
      set(${out_reason} "nvidia-smi -L lists ${first}" PARENT_SCOPE)
      return()
    elseif(rc STREQUAL "0")
      set(smi "nvidia-smi -L lists no GPU")
    else()
      set(smi "nvidia-smi -L failed (${rc})")
    endif()
  else()
    set(smi "no nvidia-smi on PATH")
  endif()
  foreach(f IN LISTS VEIL_GPU_DEVICE_FILES)
    if(EXISTS "${f}")
      set(${out_found} TRUE PARENT_SCOPE)
      set(${out_reason} "${f} exists" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  list(JOIN VEIL_GPU_DEVICE_FILES ", " files)
  set(${out_found} FALSE PARENT_SCOPE)
  set(${out_reason} "${smi} and ${files} does not exist" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  veil_gpu_present(found reason)
  if(found)
    message("gpu: yes (${reason})")
  else()
    message("gpu: no (${reason})")
  endif()
endif()
