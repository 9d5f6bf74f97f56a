# SPDX-License-Identifier: MIT
# metaschemas.cmake - included by the top-level CMakeLists.txt after the
# tg_schema layer: builds the JSON Schema metaschemas into it, so a schema
# that $refs https://json-schema.org/draft/2020-12/schema (or 2019-09's,
# draft 7's, or a vocabulary metaschema) compiles with no network and no
# remotes. The documents come from Debian's python3-jsonschema at build
# time (embed_metaschemas.cmake says which and how); TG_METASCHEMA_DIR
# names another directory of the same layout.
set(TG_METASCHEMA_DIR "/usr/lib/python3/dist-packages/jsonschema/schemas"
  CACHE PATH "Directory of python3-jsonschema's metaschemas (draft2020-12.json, vocabularies.json, ...)")
foreach(f draft2020-12.json draft2019-09.json draft7.json vocabularies.json)
  if(NOT EXISTS "${TG_METASCHEMA_DIR}/${f}")
    message(FATAL_ERROR
      "toolgate builds the JSON Schema metaschemas in, from Debian's "
      "python3-jsonschema: ${TG_METASCHEMA_DIR}/${f} is missing. Install "
      "it (scripts/deps.sh, or apt-get install python3-jsonschema), or "
      "point -DTG_METASCHEMA_DIR at a directory of the same layout.")
  endif()
endforeach()
set(tg_meta_c ${CMAKE_BINARY_DIR}/generated/metaschemas.c)
set(tg_meta_inputs)
foreach(f draft2020-12.json draft2019-09.json draft7.json vocabularies.json)
  list(APPEND tg_meta_inputs "${TG_METASCHEMA_DIR}/${f}")
endforeach()
add_custom_command(OUTPUT ${tg_meta_c}
  COMMAND ${CMAKE_COMMAND} -DDIR=${TG_METASCHEMA_DIR} -DOUT=${tg_meta_c}
          -P ${CMAKE_CURRENT_LIST_DIR}/embed_metaschemas.cmake
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/embed_metaschemas.cmake ${tg_meta_inputs}
  COMMENT "Embedding the JSON Schema metaschemas from ${TG_METASCHEMA_DIR}"
  VERBATIM)
target_sources(tg_schema PRIVATE ${tg_meta_c})
