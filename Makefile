# Two commands: `make run` and `make test`. Both install what the build needs (Debian packages,
# only when one is missing), configure and build in Release, then run.
BUILD_DIR ?= build
DEBIAN_PACKAGES := cmake g++ make python3 libgtest-dev libgmock-dev libbenchmark-dev libyaml-cpp-dev \
                   nlohmann-json3-dev libcli11-dev libfmt-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
JOBS ?= $(shell nproc)

.PHONY: all deps build run test bench clean

all: build

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y $$missing; \
	fi

$(BUILD_DIR)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Flagship example: Llama 3.1 405B on 16,384 H100 with the Llama 3 paper's strategy (Table 4,
# row 2), kept as a scenario file whose comments give each choice's source.
run: build
	$(BUILD_DIR)/stepcast estimate --config examples/llama3.1-405b-llama3-paper.yaml

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(BUILD_DIR)/stepcast_bench

clean:
	rm -rf $(BUILD_DIR)
